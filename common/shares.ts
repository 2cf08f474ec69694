/**
 * Each tenant's fair share as it travels, like the capacity signal (capacity.ts): the scheduler's
 * leader computes it each round (`Decisions.shares`) and replaces one Redis hash, a field per tenant
 * (scheduler/rounds/publish-round.ts); the API serves a tenant its own (api/jobs/queue-view.ts) and
 * every scheduler replica exports them all as gauges. Derived data: a lost write is rewritten by the
 * next round, and a tenant missing from the hash holds nothing and waits for nothing.
 */
import type { Redis } from 'ioredis';
import type { RedisNames } from './queues.js';

/** One tenant in one pool after a round. */
export interface PoolShare {
  /** Dominant fraction of the pool it holds (0..1, not divided by its weight). */
  share: number;
  /** The fraction its weight entitles it to among the tenants that want devices (0..1). */
  entitlement: number;
  /** Devices it holds, and devices its queued jobs want. */
  devices: number;
  demand: number;
}

/** The value of a tenant's field: its pools, and the round that computed them (ms since the epoch). */
export interface TenantSharesEntry {
  pools: Record<string, PoolShare>;
  at: number;
}

export interface TenantPoolShare extends PoolShare {
  tenantId: string;
  pool: string;
}

/** Every tenant's share of every pool from the leader's last round, ordered by tenant then pool. */
export async function readAllShares(redis: Redis, names: RedisNames): Promise<TenantPoolShare[]> {
  const all = await redis.hgetall(names.sharesKey);
  const out: TenantPoolShare[] = [];
  for (const [tenantId, raw] of Object.entries(all)) {
    const { pools } = JSON.parse(raw) as TenantSharesEntry;
    for (const [pool, s] of Object.entries(pools)) out.push({ tenantId, pool, ...s });
  }
  const key = (s: TenantPoolShare) => `${s.tenantId}\u0000${s.pool}`;
  return out.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
