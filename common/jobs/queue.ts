/**
 * The BullMQ side of the job queue. PostgreSQL is the truth; a queue entry only tells the scheduler
 * "look at this job". Entry ids are deterministic (`<jobId>-q<queueSeq>`), so enqueueing the same
 * job twice (a retry, a reconciliation racing a request) adds it once.
 */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { JOBS_QUEUE, queueEntryId, type QueuedJobMessage, type RedisNames } from '../queues.js';

const entryOptions = (msg: QueuedJobMessage) => ({
  jobId: queueEntryId(msg.jobId, msg.queueSeq),
  removeOnComplete: true,
  removeOnFail: 1000,
});

export class JobQueue {
  readonly queue: Queue<QueuedJobMessage>;

  constructor(connection: Redis, names: RedisNames) {
    this.queue = new Queue<QueuedJobMessage>(JOBS_QUEUE, { connection, prefix: names.bullPrefix });
  }

  async enqueue(msg: QueuedJobMessage): Promise<void> {
    await this.queue.add('job', msg, entryOptions(msg));
  }

  /** Several entries in one round trip (a batch of admissions); same ids and options as enqueue. */
  async enqueueMany(msgs: QueuedJobMessage[]): Promise<void> {
    if (!msgs.length) return;
    await this.queue.addBulk(msgs.map((msg) => ({ name: 'job', data: msg, opts: entryOptions(msg) })));
  }

  /** Removes a waiting entry; an entry a consumer already holds is left to it (it re-checks the row). */
  async remove(jobId: string, queueSeq: number): Promise<boolean> {
    const removed = await this.queue.remove(queueEntryId(jobId, queueSeq));
    return removed === 1;
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
