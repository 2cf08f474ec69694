/**
 * What follows every committed transition, whoever made it (API, scheduler): its events are
 * announced, and the scheduler is woken when a job went back to the queue or freed its devices.
 */
import type { Redis } from 'ioredis';
import type pg from 'pg';
import type { RedisNames } from '../queues.js';
import { notifyEvents } from './notify.js';
import type { SchedulerWake } from './scheduler-wake.js';
import { jobsOnNode, requeueJob, type RequeueReason, type Transitioned } from './transitions.js';

export interface PublishContext {
  pool: pg.Pool;
  redis: Redis;
  names: RedisNames;
  wake: SchedulerWake;
}

/** Returns whether the transition happened (its guard held). */
export async function publishTransition(ctx: PublishContext, t: Transitioned | null): Promise<boolean> {
  if (!t) return false;
  await notifyEvents(ctx.redis, ctx.names, t.job.id, t.eventIds);
  // Back in the queue, or devices freed: either way the scheduler should look now.
  if (['queued', 'succeeded', 'failed', 'cancelled'].includes(t.job.status)) await ctx.wake.wake();
  return true;
}

/** Every job a node holds goes back to the queue (the node was lost, or restarted). */
export async function requeueNodeJobs(
  ctx: PublishContext,
  nodeId: string,
  reason: RequeueReason,
  error: string,
): Promise<number> {
  let requeued = 0;
  for (const jobId of await jobsOnNode(ctx.pool, nodeId)) {
    if (await publishTransition(ctx, await requeueJob(ctx.pool, jobId, nodeId, null, reason, error)))
      requeued++;
  }
  return requeued;
}
