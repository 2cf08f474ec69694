/**
 * Where a queued job stands, as the scheduler's last round left it (scheduler/rounds/publish-round.ts
 * writes a Redis hash each round): its position in its pool and among its tenant's jobs, its
 * estimated start and why it waits. Derived data: missing until the first round after a Redis loss,
 * then rewritten; and left out (the fields null) while Redis cannot be reached, so that job reads
 * still answer from PostgreSQL.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../../common/logger.js';
import type { RedisNames } from '../../common/queues.js';

export interface QueueView {
  queuePosition: number;
  tenantQueuePosition: number;
  estimatedStartAt: string | null;
  /** When its run is predicted to end (null: not predicted, or a view written before this field). */
  estimatedFinishAt: string | null;
  waitReason: string;
  pool: string;
}

function parse(raw: string | null): QueueView | null {
  if (!raw) return null;
  const v = JSON.parse(raw) as {
    p: number;
    tp: number;
    eta: number | null;
    end?: number | null;
    r: string;
    pool: string;
  };
  return {
    queuePosition: v.p,
    tenantQueuePosition: v.tp,
    estimatedStartAt: v.eta === null ? null : new Date(v.eta).toISOString(),
    estimatedFinishAt: v.end === null || v.end === undefined ? null : new Date(v.end).toISOString(),
    waitReason: v.r,
    pool: v.pool,
  };
}

/** Connections whose outage is logged already (once an outage, until a read succeeds again). */
const outageLogged = new WeakSet<Redis>();

/**
 * The views of these jobs, those the last round wrote. Optional: with Redis down, restarting or
 * failing the read, none (the jobs' `queuePosition`, `estimatedStartAt` and queued
 * `estimatedFinishAt` are null and `waitReason` is the one stored with the job), logged once an
 * outage. A connection not ready is not waited for: its commands would wait out the client's
 * reconnection attempts (seconds) and then fail.
 */
export async function readQueueViews(
  redis: Redis,
  names: RedisNames,
  jobIds: string[],
  log?: Pick<Logger, 'warn'>,
): Promise<Map<string, QueueView>> {
  const out = new Map<string, QueueView>();
  if (!jobIds.length) return out;
  let raw: (string | null)[];
  try {
    if (redis.status !== 'ready') throw new Error(`redis connection is ${redis.status}`);
    raw = await redis.hmget(names.queueViewKey, ...jobIds);
  } catch (err) {
    if (!outageLogged.has(redis)) {
      outageLogged.add(redis);
      log?.warn({ err }, 'queue views unavailable (Redis); jobs are listed without them');
    }
    return out;
  }
  outageLogged.delete(redis);
  jobIds.forEach((id, i) => {
    const v = parse(raw[i] ?? null);
    if (v) out.set(id, v);
  });
  return out;
}

/** A pool's queue in the scheduler's order, a page at a time (admins; Kueue's visibility API). */
export async function readPoolQueue(
  redis: Redis,
  names: RedisNames,
  pool: string,
  offset: number,
  limit: number,
): Promise<{ total: number; entries: (QueueView & { jobId: string })[] }> {
  const all = await redis.hgetall(names.queueViewKey);
  const entries: (QueueView & { jobId: string })[] = [];
  for (const [jobId, raw] of Object.entries(all)) {
    const v = parse(raw);
    if (v && v.pool === pool) entries.push({ jobId, ...v });
  }
  entries.sort((a, b) => a.queuePosition - b.queuePosition);
  return { total: entries.length, entries: entries.slice(offset, offset + limit) };
}

/** A tenant's share of each pool against its entitlement, from the last round. */
export async function readShares(
  redis: Redis,
  names: RedisNames,
  tenantId: string,
): Promise<Record<string, { share: number; entitlement: number; devices: number; demand: number }>> {
  const raw = await redis.hget(names.sharesKey, tenantId);
  return raw ? (JSON.parse(raw) as { pools: Record<string, never> }).pools : {};
}
