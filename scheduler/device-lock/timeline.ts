// Turns timeline stream entries (one per device per grant and per end, in ownership order) into
// intervals. An end entry repeats the grant's fields, so an interval whose grant fell outside
// the window read (or was trimmed by MAXLEN) is still complete.
import type { DeviceHold, EndReason, TimelineInterval } from './types.js';

export type StreamEntry = [id: string, fields: string[]];

function fieldsOf(flat: string[]): Map<string, string> {
  const m = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) m.set(flat[i] as string, flat[i + 1] as string);
  return m;
}

export function intervalsFromEntries(
  entries: readonly StreamEntry[],
  wanted: ReadonlySet<string> | null,
): TimelineInterval[] {
  const byKey = new Map<string, TimelineInterval>();
  const out: TimelineInterval[] = [];
  for (const [, flat] of entries) {
    const f = fieldsOf(flat);
    const device = f.get('d') ?? '';
    if (wanted && !wanted.has(device)) continue;
    const token = Number(f.get('t'));
    const key = `${device}\u0000${token}`;
    const endAt = f.get('e') === 'end' ? Number(f.get('b')) : null;
    const open = byKey.get(key);
    if (open && endAt !== null) {
      open.end = endAt;
      open.reason = f.get('r') as EndReason;
      continue;
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
      reason: endAt === null ? null : (f.get('r') as EndReason),
    };
    byKey.set(key, interval);
    out.push(interval);
  }
  return out;
}

export function openInterval(device: string, hold: DeviceHold): TimelineInterval {
  const { job, stage, holder, waiterId, token, grantedAt } = hold;
  return { device, job, stage, holder, waiterId, token, start: grantedAt, end: null, reason: null };
}
