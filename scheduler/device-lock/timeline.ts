// Turns timeline stream entries into one interval per device per grant. Entry fields, in this
// order for both kinds: e = grant | end, d = JSON array of devices, t = JSON array of their
// tokens, h holder, j job, s stage, w waiter id, a start (ms), b end (ms; '' in a grant),
// r reason ('' in a grant). Entries are in ownership order. An end entry repeats the grant's fields, so an interval whose grant fell
// outside the window read (or was trimmed by MAXLEN) is still complete.
import type { DeviceHold, EndReason, TimelineInterval } from './types.js';

export type StreamEntry = [id: string, fields: string[]];

function fieldsOf(flat: string[]): Map<string, string> {
  const m = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) m.set(flat[i] as string, flat[i + 1] as string);
  return m;
}

/** Which devices a read wants; null = all. */
export type DeviceFilter = ((device: string) => boolean) | null;

export function intervalsFromEntries(
  entries: readonly StreamEntry[],
  wanted: DeviceFilter,
): TimelineInterval[] {
  const byKey = new Map<string, TimelineInterval>();
  const out: TimelineInterval[] = [];
  for (const [, flat] of entries) {
    const f = fieldsOf(flat);
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
