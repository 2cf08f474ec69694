// The read side of the lock (what the API serves: device state, queue, timeline). Plain reads,
// no scripts: a process that only observes locks needs nothing else.
import type { Redis } from 'ioredis';
import { deviceKey, type LockKeys } from './keys.js';
import {
  encodeTimelineCursor,
  holdKey,
  holdsOf,
  openInterval,
  parseTimelineCursor,
  recordsOf,
  type DeviceFilter,
  type StreamEntry,
} from './timeline.js';
import type { DeviceState, TimelineInterval, TimelinePage, TimelineQuery, WaiterInfo } from './types.js';

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

/**
 * Stream entries read by a page's first call, doubled each call after it up to the last: a page of
 * a few holds reads little, a scan through a busy cluster's stream takes few round trips.
 */
const FIRST_CHUNK = 256;
const LAST_CHUNK = 8192;
/**
 * Entries one page reads at most to fill itself (the stream's default length): one node's holds
 * may be few among a busy cluster's. A page that stops here has fewer holds and a cursor.
 */
const SCAN_BUDGET = 100_000;

/** The stream from `start` on, a chunk at a time, until `each` says stop or the stream ends. */
async function scan(
  redis: Redis,
  keys: LockKeys,
  start: string,
  each: (entry: StreamEntry) => boolean,
): Promise<{ ended: boolean }> {
  for (let from = start, chunk = FIRST_CHUNK; ; chunk = Math.min(2 * chunk, LAST_CHUNK)) {
    const entries = (await redis.xrange(keys.timeline, from, '+', 'COUNT', chunk)) as StreamEntry[];
    for (const e of entries) if (!each(e)) return { ended: false };
    const last = entries[entries.length - 1];
    if (entries.length < chunk || !last) return { ended: true };
    from = `(${last[0]}`;
  }
}

/**
 * Holds from the timeline in the order they were granted, one per device per grant, at most
 * `limit` of the wanted devices' (a grant of several devices is never split across pages), each
 * with its end when it has ended — found further on in the stream if need be, so that a page
 * never shows an ended hold as open. A hold granted before the window (`since`, or the oldest
 * entry kept) is listed where its end was written; on the first page, one still open too.
 */
export async function readTimeline(redis: Redis, keys: LockKeys, q: TimelineQuery): Promise<TimelinePage> {
  const limit = q.limit ?? 1000;
  const cursor = q.after === undefined ? null : parseTimelineCursor(q.after);
  if (q.after !== undefined && !cursor) throw new TypeError(`not a timeline cursor: ${q.after}`);
  const only = q.devices ? new Set(q.devices) : null;
  const prefix = q.devicePrefix;
  const wanted: DeviceFilter =
    only || prefix ? (d) => (!only || only.has(d)) && (!prefix || d.startsWith(prefix)) : null;
  const start = cursor ? `(${cursor.entry}` : q.since !== undefined ? String(Math.floor(q.since)) : '-';
  let floor = cursor?.floor;

  // 1. Fill the page, an entry at a time.
  const intervals: TimelineInterval[] = [];
  const byKey = new Map<string, TimelineInterval>();
  let lastEntry: string | null = null;
  let scanned = 0;
  let full = false;
  const { ended } = await scan(redis, keys, start, ([id, flat]) => {
    // This entry's holds, taken whole or not at all (the page is full before it).
    const added = new Map<string, TimelineInterval>();
    const closed: [TimelineInterval, TimelineInterval][] = [];
    for (const rec of recordsOf(flat))
      for (const h of holdsOf(rec, wanted)) {
        const held = byKey.get(h.key) ?? added.get(h.key);
        if (h.ends && held) closed.push([held, h.interval]);
        else if (!h.ends) {
          floor ??= h.interval.start;
          added.set(h.key, h.interval);
        }
        // An end whose grant these pages did not read: listed here if it was granted before the
        // window (TimelineCursor); otherwise an earlier page listed it.
        else if (floor === undefined || h.interval.start < floor) added.set(h.key, h.interval);
      }
    if (intervals.length > 0 && intervals.length + added.size > limit) {
      full = true;
      return false;
    }
    for (const [held, end] of closed) {
      held.end = end.end;
      held.reason = end.reason;
    }
    for (const [key, i] of added) {
      intervals.push(i);
      byKey.set(key, i);
    }
    lastEntry = id;
    if (intervals.length >= limit) full = true;
    return !full && ++scanned < SCAN_BUDGET;
  });

  // Each device's current hold, read once for steps 2 and 3.
  const states = new Map<string, DeviceState>();
  const inspect = async (devices: readonly string[]) => {
    const unread = [...new Set(devices)].filter((d) => !states.has(d));
    for (const st of await Promise.all(unread.map((d) => inspectDevice(redis, keys, d))))
      states.set(st.device, st);
    return devices.map((d) => states.get(d)!);
  };
  const before = q.since !== undefined && !cursor;
  const leased = before
    ? (q.devices ?? (await redis.zrange(keys.leases, 0, -1))).filter((d) => !wanted || wanted(d))
    : [];

  // 2. Ends of the page's open holds: none while the device still has it, else further on.
  const open = intervals.filter((i) => i.end === null);
  if (open.length > 0) {
    const now = await inspect([...leased, ...open.map((i) => i.device)]);
    const current = new Set(now.flatMap((st) => (st.hold ? [holdKey(st.device, st.hold.token)] : [])));
    const ending = new Map(
      open
        .filter((i) => !current.has(holdKey(i.device, i.token)))
        .map((i) => [holdKey(i.device, i.token), i]),
    );
    if (ending.size > 0 && lastEntry !== null)
      await scan(redis, keys, `(${lastEntry}`, ([, flat]) => {
        for (const rec of recordsOf(flat))
          for (const h of holdsOf(rec, wanted)) {
            const i = h.ends ? ending.get(h.key) : undefined;
            if (!i) continue;
            i.end = h.interval.end;
            i.reason = h.interval.reason;
            ending.delete(h.key);
          }
        return ending.size > 0;
      });
  }

  // 3. Holds granted before `since` and still open have no entry in the window: add them.
  if (before) {
    for (const state of await inspect(leased)) {
      const hold = state.hold;
      if (!hold || hold.grantedAt >= q.since! || byKey.has(holdKey(state.device, hold.token))) continue;
      intervals.unshift(openInterval(state.device, hold));
    }
  }
  const more = full || (!ended && scanned >= SCAN_BUDGET);
  return {
    intervals,
    cursor: more && lastEntry !== null ? encodeTimelineCursor({ entry: lastEntry, floor }) : null,
    recordedSince: await recordedSince(redis, keys),
  };
}

/**
 * When the oldest entry kept was written: its id's time part (XADD `*`, Redis server time), or the
 * time its records carry for themselves (a grant's start, an end's end: the script's TIME) where
 * that is earlier: the XADD takes Redis's clock a millisecond or two after the script's TIME on a
 * busy machine, and a hold recorded in the first entry then started before "recorded since" (a CI
 * run). An empty page after a Redis restart reads as what it is, a timeline that starts after it.
 */
async function recordedSince(redis: Redis, keys: LockKeys): Promise<number | null> {
  const [first] = (await redis.xrange(keys.timeline, '-', '+', 'COUNT', 1)) as StreamEntry[];
  if (!first) return null;
  let since = Number(first[0].split('-')[0]);
  for (const r of recordsOf(first[1])) {
    const at = Number(r.get('e') === 'end' ? r.get('b') : r.get('a'));
    if (Number.isFinite(at)) since = Math.min(since, at);
  }
  return since;
}
