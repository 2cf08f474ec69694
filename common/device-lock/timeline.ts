// Turns timeline stream entries into one interval per device per grant. A stream entry holds
// the records of one script run, in order (a handoff: the end, then the grant). Each record
// is the same 10 fields in this order: e = grant | end, d = JSON array of devices, t = JSON
// array of their tokens, h holder, j job, s stage, w waiter id, a start (ms), b end (ms; '' in
// a grant), r reason ('' in a grant). Entries and their records are in ownership order. An end
// record repeats the grant's fields, so an interval whose grant fell outside the window read
// (or was trimmed by MAXLEN) is still complete.
import type { DeviceHold, EndReason, TimelineInterval } from './types.js';

export type StreamEntry = [id: string, fields: string[]];

/** The records of one stream entry's flat field list; each starts at an `e` field. */
export function recordsOf(flat: readonly string[]): Map<string, string>[] {
  const out: Map<string, string>[] = [];
  let cur: Map<string, string> | undefined;
  for (let i = 0; i + 1 < flat.length; i += 2) {
    if (flat[i] === 'e' || !cur) out.push((cur = new Map()));
    cur.set(flat[i] as string, flat[i + 1] as string);
  }
  return out;
}

/** Which devices a read wants; null = all. */
export type DeviceFilter = ((device: string) => boolean) | null;

export function intervalsFromEntries(
  entries: readonly StreamEntry[],
  wanted: DeviceFilter,
): TimelineInterval[] {
  const byKey = new Map<string, TimelineInterval>();
  const out: TimelineInterval[] = [];
  for (const f of entries.flatMap(([, flat]) => recordsOf(flat))) {
    const devices = JSON.parse(f.get('d') ?? '[]') as string[];
    const tokens = JSON.parse(f.get('t') ?? '[]') as number[];
    const endAt = f.get('e') === 'end' ? Number(f.get('b')) : null;
    const reason = endAt === null ? null : (f.get('r') as EndReason);
    devices.forEach((device, i) => {
      if (wanted && !wanted(device)) return;
      const token = Number(tokens[i]);
      const key = `${device}\u0000${token}`;
      const open = byKey.get(key);
      if (open && endAt !== null) {
        open.end = endAt;
        open.reason = reason;
        return;
      }
      const interval: TimelineInterval = {
        device,
        job: f.get('j') ?? '',
        stage: f.get('s') ?? '',
        holder: f.get('h') ?? '',
        waiterId: f.get('w') ?? '',
        token,
        start: Number(f.get('a')),
        end: endAt,
        reason,
      };
      byKey.set(key, interval);
      out.push(interval);
    });
  }
  return out;
}

export function openInterval(device: string, hold: DeviceHold): TimelineInterval {
  const { job, stage, holder, waiterId, token, grantedAt } = hold;
  return { device, job, stage, holder, waiterId, token, start: grantedAt, end: null, reason: null };
}
