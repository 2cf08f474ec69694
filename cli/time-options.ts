/**
 * The parser of `--since`: an ISO time (`2024-05-01T12:00:00Z`, `2024-05-01`) or a duration before
 * now (`90s`, `10m`, `2h`, `1d`, `1h30m`), as the epoch milliseconds the API's `since` takes. A few
 * lines rather than a dependency: the units an operator types are these four, and a typo is refused
 * here, by commander, naming the option, before any request.
 */
import { InvalidArgumentError } from 'commander';

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(?:\d+(?:\.\d+)?[smhd])+$/;
const PART = /(\d+(?:\.\d+)?)([smhd])/g;
// A date first: Date.parse alone also reads '5' or 'May 1' in the local fashion of the engine.
const ISO_TIME = /^\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?$/i;

/** Milliseconds in a duration such as `1h30m`, or null if it is not one. */
export function durationMs(value: string): number | null {
  const v = value.trim();
  if (!DURATION.test(v)) return null;
  let ms = 0;
  for (const [, n, unit] of v.matchAll(PART)) ms += Number(n) * UNIT_MS[unit as keyof typeof UNIT_MS];
  return ms;
}

/** Epoch ms of `value` (an ISO time, or a duration before `now`), or null if it is neither. */
export function timeAt(value: string, now: number): number | null {
  const ago = durationMs(value);
  if (ago !== null) return Math.max(0, Math.floor(now - ago));
  const at = ISO_TIME.test(value.trim()) ? Date.parse(value.trim()) : NaN;
  return Number.isFinite(at) && at >= 0 ? at : null;
}

/** `--since`, as commander calls it (its second argument, an earlier value, is not a clock). */
export function parseSince(value: string): number {
  const at = timeAt(value, Date.now());
  if (at === null)
    throw new InvalidArgumentError('Not an ISO time (2024-05-01T12:00:00Z) or a duration (10m, 2h, 1d).');
  return at;
}
