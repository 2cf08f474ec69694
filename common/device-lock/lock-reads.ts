// The read side of the lock (what the API serves: device state, queue, timeline). Plain reads,
// no scripts: a process that only observes locks needs nothing else.
import type { Redis } from 'ioredis';
import { deviceKey, type LockKeys } from './keys.js';
import { intervalsFromEntries, openInterval, type DeviceFilter, type StreamEntry } from './timeline.js';
import type { DeviceState, TimelinePage, TimelineQuery, WaiterInfo } from './types.js';

/** A waiter's record in the waiter-data hash (see lua/includes/lock-core.lua). */
interface WaiterRecord {
  devs: string[];
  job: string;
  stage: string;
  holder: string;
  prio: number;
  ready: number;
  lease: number;
  ttl: number;
  since: number;
  seq: number;
  exp: number;
}

/** A device's current hold (null when free) and the last fencing token issued for it. */
export async function inspectDevice(redis: Redis, keys: LockKeys, device: string): Promise<DeviceState> {
  const h = await redis.hgetall(deviceKey(keys, device));
  const lastToken = Number(h.token ?? 0);
  if (!h.holder) return { device, lastToken, hold: null }; // '' = free since its last end
  const hold = {
    holder: h.holder,
    job: h.job ?? '',
    stage: h.stage ?? '',
    waiterId: h.waiter ?? '',
    token: lastToken,
    leaseUntil: Number(h.leaseUntil),
    grantedAt: Number(h.grantedAt),
  };
  return { device, lastToken, hold };
}

/** Live waiters in the order the grant pass considers them (expired ones may still show). */
export async function listWaiters(redis: Redis, keys: LockKeys): Promise<WaiterInfo[]> {
  const recs = await redis.hgetall(keys.waiterData);
  const out: WaiterInfo[] = [];
  Object.entries(recs).forEach(([waiterId, rec]) => {
    const w = JSON.parse(rec) as WaiterRecord;
    out.push({
      waiterId,
      devices: w.devs,
      job: w.job,
      stage: w.stage,
      holder: w.holder,
      priority: w.prio,
      readiness: w.ready,
      seq: w.seq,
      since: w.since,
      expiresAt: w.exp,
    });
  });
  return out.sort((a, b) => b.priority - a.priority || b.readiness - a.readiness || a.seq - b.seq);
}

/** Grant intervals from the timeline, oldest first, one per device per grant. */
export async function readTimeline(redis: Redis, keys: LockKeys, q: TimelineQuery): Promise<TimelinePage> {
  const limit = q.limit ?? 1000;
  const start = q.after ? `(${q.after}` : q.since !== undefined ? String(Math.floor(q.since)) : '-';
  const entries = (await redis.xrange(keys.timeline, start, '+', 'COUNT', limit)) as StreamEntry[];
  const only = q.devices ? new Set(q.devices) : null;
  const prefix = q.devicePrefix;
  const wanted: DeviceFilter =
    only || prefix ? (d) => (!only || only.has(d)) && (!prefix || d.startsWith(prefix)) : null;
  const intervals = intervalsFromEntries(entries, wanted);
  if (q.since !== undefined && !q.after) {
    // Holds granted before `since` and still open have no entry in the window: add them.
    const seen = new Set(intervals.map((i) => `${i.device}\u0000${i.token}`));
    const held = (q.devices ?? (await redis.zrange(keys.leases, 0, -1))).filter((d) => !wanted || wanted(d));
    for (const state of await Promise.all(held.map((d) => inspectDevice(redis, keys, d)))) {
      const hold = state.hold;
      if (!hold || hold.grantedAt >= q.since || seen.has(`${state.device}\u0000${hold.token}`)) continue;
      intervals.unshift(openInterval(state.device, hold));
    }
  }
  const last = entries[entries.length - 1];
  return { intervals, cursor: entries.length === limit && last ? last[0] : null };
}
