/**
 * Consumes the jobs queue: each entry is placed (queued → placed, then the node is told) or, when no
 * node fits, delayed and retried, with the job's wait reason updated for its tenant. An entry whose
 * job moved on (cancelled, or requeued under a newer queue_seq) is simply completed.
 *
 * Order matters for crash safety: the row leaves `queued` before the entry completes, so the API's
 * reconciliation never re-adds work in hand; an entry completed without a row change is re-added.
 */
import { DelayedError, Worker, type Job as BullJob } from 'bullmq';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import type { Logger } from '../../common/logger.js';
import { notifyEvents, notifyNode } from '../../common/jobs/notify.js';
import { placeJob, setWaitReason } from '../../common/jobs/transitions.js';
import { JOBS_QUEUE, type QueuedJobMessage, type RedisNames } from '../../common/queues.js';
import { firstFit } from './first-fit.js';
import { readSnapshot } from './snapshot.js';

export interface PlacementOptions {
  maxJobsPerDevice: number;
  heartbeatTimeoutMs: number;
  retryMs: number;
  /** How long a scheduler's hold on a queue entry outlives the scheduler (it renews while alive). */
  lockMs: number;
  /** Test-only: `crash_in_placement` dies holding the first entry it takes. */
  fault?: string;
}

export function startPlacementConsumer(deps: {
  pool: pg.Pool;
  redis: Redis;
  blocking: Redis;
  names: RedisNames;
  logger: Logger;
  options: PlacementOptions;
}): Worker<QueuedJobMessage> {
  const { pool, redis, names, logger, options } = deps;

  async function handle(entry: BullJob<QueuedJobMessage>, token?: string): Promise<void> {
    const { jobId, queueSeq } = entry.data;
    if (options.fault === 'crash_in_placement') process.kill(process.pid, 'SIGKILL');
    const r = await pool.query(
      `SELECT status, queue_seq, pool, devices, spec->'workflow'->>'mode' AS mode FROM jobs WHERE id = $1`,
      [jobId],
    );
    const job = r.rows[0];
    if (!job || job.status !== 'queued' || job.queue_seq !== queueSeq) return;
    const result = firstFit(
      { pool: job.pool, devices: job.devices, mode: job.mode ?? 'auto' },
      await readSnapshot(pool, options.heartbeatTimeoutMs),
      options.maxJobsPerDevice,
    );
    if (result.ok) {
      const placed = await placeJob(pool, jobId, queueSeq, result.placement);
      if (placed) {
        await notifyEvents(redis, names, jobId, placed.eventIds);
        await notifyNode(redis, names, result.placement.nodeId);
        logger.info({ jobId, placement: result.placement }, 'job placed');
        return;
      }
      await setWaitReason(pool, jobId, 'quota');
    } else {
      await setWaitReason(pool, jobId, result.waitReason);
    }
    await entry.moveToDelayed(Date.now() + options.retryMs, token);
    throw new DelayedError();
  }

  const worker = new Worker<QueuedJobMessage>(JOBS_QUEUE, handle, {
    connection: deps.blocking,
    prefix: names.bullPrefix,
    concurrency: 1,
    removeOnComplete: { count: 0 },
    // An entry held by a scheduler that died goes back to the queue within lockMs * 1.5. Handling
    // an entry twice is harmless (it re-checks the row's status and queue_seq), so however often
    // schedulers die holding it, it is never failed as stalled.
    lockDuration: options.lockMs,
    stalledInterval: Math.ceil(options.lockMs / 2),
    maxStalledCount: Number.MAX_SAFE_INTEGER,
  });
  worker.on('failed', (entry, err) => {
    if (!(err instanceof DelayedError)) logger.warn({ err, jobId: entry?.data.jobId }, 'placement failed');
  });
  return worker;
}
