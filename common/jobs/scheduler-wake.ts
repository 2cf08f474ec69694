/**
 * The job queue is PostgreSQL itself: every `queued` row is in it, and the scheduler's leader reads
 * them all in each round (scheduler/rounds/). A crash between a commit and anything after it, or
 * Redis losing all its data, therefore loses nothing and duplicates nothing. What Redis carries is
 * only a wake-up: a round starts at once on a submission, a requeue, a finish or a cancellation
 * instead of at the next tick (at most a round interval later). A lost wake-up only waits for it,
 * so waking never holds the caller: skipped while the connection is not ready, waited for a short
 * bound otherwise (best-effort.ts), and never thrown.
 */
import type { Redis } from 'ioredis';
import type { RedisNames } from '../queues.js';
import { bestEffortNotice, type NoticeLog, type NoticeOutcome } from './best-effort.js';

export class SchedulerWake {
  constructor(
    private readonly redis: Redis,
    private readonly names: RedisNames,
    private readonly log: NoticeLog,
  ) {}

  wake(): Promise<NoticeOutcome> {
    return bestEffortNotice(this.redis, this.log, 'scheduler wake-up', () =>
      this.redis.publish(this.names.schedulerChannel, '1'),
    );
  }
}
