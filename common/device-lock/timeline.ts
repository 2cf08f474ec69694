// Turns timeline stream entries into one interval per device per grant. A stream entry holds
// the records of one script run, in order (a handoff: the end, then the grant). Each record
// is the same 10 fields in this order: e = grant | end, d = JSON array of devices, t = JSON
// array of their tokens, h holder, j job, s stage, w waiter id, a start (ms), b end (ms; '' in
// a grant), r reason ('' in a grant). Entries and their records are in ownership order. An end
// record repeats the grant's fields, so an interval whose grant fell outside the window read
// (or was trimmed by MAXLEN) is still complete. Reads and pages: lock-reads.ts.
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

/** A record's holds on the devices a read wants, each with whether the record ends it. */
export function holdsOf(
  f: Map<string, string>,
  wanted: DeviceFilter,
): { key: string; ends: boolean; interval: TimelineInterval }[] {
  const devices = JSON.parse(f.get('d') ?? '[]') as string[];
  const tokens = JSON.parse(f.get('t') ?? '[]') as number[];
  const endAt = f.get('e') === 'end' ? Number(f.get('b')) : null;
  const reason = endAt === null ? null : (f.get('r') as EndReason);
  const out: { key: string; ends: boolean; interval: TimelineInterval }[] = [];
  devices.forEach((device, i) => {
    if (wanted && !wanted(device)) return;
    const token = Number(tokens[i]);
    out.push({
      key: holdKey(device, token),
      ends: endAt !== null,
      interval: {
        device,
        job: f.get('j') ?? '',
        stage: f.get('s') ?? '',
        holder: f.get('h') ?? '',
        waiterId: f.get('w') ?? '',
        token,
        start: Number(f.get('a')),
        end: endAt,
        reason,
      },
    });
  });
  return out;
}

/** A hold is one grant of one device: its device and fencing token. */
export const holdKey = (device: string, token: number): string => `${device}\u0000${token}`;

/**
 * A page's cursor: the last stream entry it read, and when the first hold granted in the pages read
 * so far began (unset until one was). Grants are written in time order, so a hold that began
 * before it was granted before the first page's window: it is listed where its end was written,
 * on whichever page that falls; any other hold where it was granted.
 */
export interface TimelineCursor {
  entry: string;
  floor: number | undefined;
}

export const encodeTimelineCursor = (c: TimelineCursor): string => `${c.entry}~${c.floor ?? ''}`;

/** The cursor a page returned, or null for anything else. */
export function parseTimelineCursor(raw: string): TimelineCursor | null {
  const m = /^(\d{1,15}-\d{1,15})~(\d{1,15})?$/.exec(raw);
  return m ? { entry: m[1]!, floor: m[2] === undefined ? undefined : Number(m[2]) } : null;
}

export function openInterval(device: string, hold: DeviceHold): TimelineInterval {
  const { job, stage, holder, waiterId, token, grantedAt } = hold;
  return { device, job, stage, holder, waiterId, token, start: grantedAt, end: null, reason: null };
}
