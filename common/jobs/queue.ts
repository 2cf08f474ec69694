/**
 * The job queue is PostgreSQL itself: every `queued` row is in it, and the scheduler's leader reads
 * them all in each round (scheduler/rounds/). A crash between a commit and anything after it, or
 * Redis losing all its data, therefore loses nothing and duplicates nothing. What Redis carries is
 * only a wake-up: a round starts at once on a submission, a requeue or a cancellation instead of at
 * the next tick (at most a second later).
 */
import type { Redis } from 'ioredis';
import type { QueuedJobMessage, RedisNames } from '../queues.js';

export class JobQueue {
  constructor(
    private readonly redis: Redis,
    private readonly names: RedisNames,
  ) {}

  /** Wakes the scheduler; a lost wake-up only delays the round to its next tick. */
  async wake(): Promise<void> {
    await this.redis.publish(this.names.schedulerChannel, '1');
  }

  async enqueue(_msg: QueuedJobMessage): Promise<void> {
    await this.wake();
  }

  async enqueueMany(msgs: QueuedJobMessage[]): Promise<void> {
    if (msgs.length) await this.wake();
  }

  /** A cancelled job leaves the queue with its row; its freed quota may let another start. */
  async remove(_jobId: string, _queueSeq: number): Promise<boolean> {
    await this.wake();
    return true;
  }

  async close(): Promise<void> {}
}
