/**
 * The capacity signal as it travels: the scheduler's leader computes it each round
 * (scheduler/core/demand.ts) and replaces one Redis hash, a field per pool; the API serves it to
 * autoscalers (`GET /v1/pools/{name}/capacity`, KEDA's metrics-api shape) and every scheduler
 * replica exports it as gauges. Derived data like the queue view: a lost write is rewritten by the
 * next round, and a pool missing from the hash has nothing to run and no ready node.
 */
import type { Redis } from 'ioredis';
import type { RedisNames } from './queues.js';

export interface PoolCapacity {
  pool: string;
  /** Devices on the pool's ready nodes that no admin cordoned. */
  devices: number;
  /** Devices on those nodes that no running or just-placed job holds. */
  idleDevices: number;
  /** Distinct devices held by running and placed jobs (draining and cordoned nodes included). */
  busyDevices: number;
  /** Devices the queued jobs want (each its minimum), jobs held back by their quota excepted. */
  queuedDevices: number;
  /** Jobs queued after the round, whatever they wait for. */
  queuedJobs: number;
  runningJobs: number;
  /** `busyDevices + queuedDevices`: what the pool needs to run all of its work now; 0 = scale to zero. */
  wantedDevices: number;
}

export interface CapacityView extends PoolCapacity {
  /** The round that computed it (ms since the epoch). */
  at: number;
}

export const emptyCapacity = (pool: string): PoolCapacity => ({
  pool,
  devices: 0,
  idleDevices: 0,
  busyDevices: 0,
  queuedDevices: 0,
  queuedJobs: 0,
  runningJobs: 0,
  wantedDevices: 0,
});

/** Replaces the whole hash in one transaction, so a pool that emptied does not linger. */
export async function writeCapacity(
  redis: Redis,
  names: RedisNames,
  pools: readonly PoolCapacity[],
  at: number,
): Promise<void> {
  const m = redis.multi().del(names.capacityKey);
  if (pools.length)
    m.hset(names.capacityKey, ...pools.flatMap((p) => [p.pool, JSON.stringify({ ...p, at })]));
  await m.exec();
}

export async function readCapacity(redis: Redis, names: RedisNames): Promise<CapacityView[]> {
  const all = await redis.hgetall(names.capacityKey);
  return Object.values(all)
    .map((raw) => JSON.parse(raw) as CapacityView)
    .sort((a, b) => (a.pool < b.pool ? -1 : a.pool > b.pool ? 1 : 0));
}

export async function readPoolCapacity(
  redis: Redis,
  names: RedisNames,
  pool: string,
): Promise<CapacityView | null> {
  const raw = await redis.hget(names.capacityKey, pool);
  return raw ? (JSON.parse(raw) as CapacityView) : null;
}
