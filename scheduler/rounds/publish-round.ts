/**
 * What follows a committed round: events are announced, nodes re-read their assignments, jobs
 * under notice are told to checkpoint (the notice is also in their assignment, so a lost message
 * only waits for the daemon's next poll; the message names the run it is for, so one published
 * late — this process paused after its commit — cannot preempt a later run of the job), and the queue view, tenant shares and each pool's
 * capacity signal are replaced in Redis for the API. The view is derived data: a lost write is rewritten by the next round.
 *
 * None of it may hold the round loop: a round that waited out ioredis's reconnection attempts
 * (seconds each while Redis is down) stopped scheduling for as long as Redis was away, and, while
 * the lease was renewed only between rounds, let it lapse and pass from scheduler to scheduler
 * (round-loop.ts). So it is all best-effort (common/jobs/best-effort.ts): skipped while Redis is not ready, waited for a short
 * bound otherwise. A view write still in flight (a slow Redis) is not followed by another: rounds
 * must not pile writes of the whole queue onto a connection that is not keeping up.
 */
import type { Redis } from 'ioredis';
import { bestEffortNotice, type NoticeLog } from '../../common/jobs/best-effort.js';
import { notifyEvents, notifyNode, sendControl } from '../../common/jobs/notify.js';
import type { RedisNames } from '../../common/queues.js';
import { writeCapacity, type PoolCapacity } from '../../common/capacity.js';
import type { PoolShare, TenantSharesEntry } from '../../common/shares.js';
import type { Decisions } from '../core/types.js';
import type { Applied } from './apply-decisions.js';

/** The queue view of one job as the API serves it (short keys: 10,000 of these per round). */
export interface QueueViewEntry {
  /** position in its pool, position among its tenant's jobs, estimated start and end (ms) or null, reason. */
  p: number;
  tp: number;
  eta: number | null;
  end: number | null;
  r: string;
  pool: string;
  at: number;
}

export class RoundPublisher {
  private viewInFlight = false;

  constructor(
    private readonly redis: Redis,
    private readonly names: RedisNames,
    private readonly log: NoticeLog,
  ) {}

  async publish(
    applied: Applied,
    d: Decisions,
    now: number,
    capacity: readonly PoolCapacity[],
  ): Promise<void> {
    const { redis, names, log } = this;
    const notices = applied.events.size + applied.nodes.size + applied.noticed.length > 0;
    await Promise.all([
      notices && bestEffortNotice(redis, log, 'round notices', () => announce(redis, names, applied)),
      !this.viewInFlight &&
        bestEffortNotice(redis, log, 'queue view', () => {
          this.viewInFlight = true;
          return Promise.all([
            writeViews(redis, names, d, now),
            writeCapacity(redis, names, capacity, now),
          ]).finally(() => (this.viewInFlight = false));
        }),
    ]);
  }
}

async function announce(redis: Redis, names: RedisNames, applied: Applied): Promise<void> {
  await Promise.all([
    ...[...applied.events].map(([jobId, ids]) => notifyEvents(redis, names, jobId, ids)),
    ...[...applied.nodes].map((nodeId) => notifyNode(redis, names, nodeId)),
    ...applied.noticed.map(({ jobId, queueSeq }) =>
      sendControl(redis, names, { jobId, queueSeq, action: 'preempt' }),
    ),
  ]);
}

export async function writeViews(redis: Redis, names: RedisNames, d: Decisions, now: number): Promise<void> {
  const view: string[] = [];
  for (const q of d.queue) {
    const e: QueueViewEntry = {
      p: q.position,
      tp: q.tenantPosition,
      eta: q.estimatedStartAt,
      end: q.estimatedEndAt,
      r: q.waitReason,
      pool: q.pool,
      at: now,
    };
    view.push(q.jobId, JSON.stringify(e));
  }
  // The shape common/shares.ts describes: the API and every replica's metrics read it.
  const shares = new Map<string, Record<string, PoolShare>>();
  for (const s of d.shares) {
    const t = shares.get(s.tenantId) ?? {};
    t[s.pool] = { share: s.share, entitlement: s.entitlement, devices: s.devices, demand: s.demand };
    shares.set(s.tenantId, t);
  }
  const tmpView = `${names.queueViewKey}:next`;
  const tmpShares = `${names.sharesKey}:next`;
  const m = redis.multi().del(tmpView, tmpShares);
  for (let i = 0; i < view.length; i += 2000) m.hset(tmpView, ...view.slice(i, i + 2000));
  for (const [t, v] of shares)
    m.hset(tmpShares, t, JSON.stringify({ pools: v, at: now } satisfies TenantSharesEntry));
  m.del(names.queueViewKey, names.sharesKey);
  if (view.length) m.rename(tmpView, names.queueViewKey);
  if (shares.size) m.rename(tmpShares, names.sharesKey);
  await m.exec();
}
