/**
 * What follows every committed transition, whoever made it (API, scheduler): its events are
 * announced, and the scheduler is woken when a job went back to the queue or freed its devices.
 * Both are Redis notices that only hurry what polling does anyway, so neither holds the caller (a
 * node's report or registration, the liveness sweep) while Redis is down or slow: best-effort.ts.
 */
import type { Redis } from 'ioredis';
import type pg from 'pg';
import type { RedisNames } from '../queues.js';
import { bestEffortNotice, type NoticeLog } from './best-effort.js';
import { notifyEvents } from './notify.js';
import type { SchedulerWake } from './scheduler-wake.js';
import { jobsOnNode, requeueJob, type RequeueReason, type Transitioned } from './transitions.js';

export interface PublishContext {
  pool: pg.Pool;
  redis: Redis;
  names: RedisNames;
  wake: SchedulerWake;
  logger: NoticeLog;
}

/** Back in the queue, or devices freed: either way the scheduler should look now. */
const wakes = (t: Transitioned) => ['queued', 'succeeded', 'failed', 'cancelled'].includes(t.job.status);

/** Announces committed transitions: their events, and one wake-up if any of them calls for it. */
async function announce(ctx: PublishContext, ts: readonly Transitioned[]): Promise<void> {
  const events = ts.filter((t) => t.eventIds.length > 0);
  await Promise.all([
    events.length > 0 &&
      bestEffortNotice(ctx.redis, ctx.logger, 'job event notices', () =>
        Promise.all(events.map((t) => notifyEvents(ctx.redis, ctx.names, t.job.id, t.eventIds))),
      ),
    ts.some(wakes) && ctx.wake.wake(),
  ]);
}

/** Announces job events committed without a transition (a node's report, a checkpoint record). */
export async function publishEvents(
  ctx: Omit<PublishContext, 'pool' | 'wake'>,
  jobId: string,
  eventIds: string[],
): Promise<void> {
  if (eventIds.length === 0) return;
  await bestEffortNotice(ctx.redis, ctx.logger, 'job event notices', () =>
    notifyEvents(ctx.redis, ctx.names, jobId, eventIds),
  );
}

/** Returns whether the transition happened (its guard held). */
export async function publishTransition(ctx: PublishContext, t: Transitioned | null): Promise<boolean> {
  if (!t) return false;
  await announce(ctx, [t]);
  return true;
}

/** Every job a node holds goes back to the queue (the node was lost, or restarted). */
export async function requeueNodeJobs(
  ctx: PublishContext,
  nodeId: string,
  reason: RequeueReason,
  error: string,
): Promise<number> {
  const requeued: Transitioned[] = [];
  try {
    for (const jobId of await jobsOnNode(ctx.pool, nodeId)) {
      const t = await requeueJob(ctx.pool, jobId, nodeId, null, reason, error);
      if (t) requeued.push(t);
    }
  } finally {
    // Announced together, what committed: one bound for the lot, not one per job.
    await announce(ctx, requeued);
  }
  return requeued.length;
}
