/**
 * The kinds of value a configuration variable takes, each refusing a bad value with what it accepts.
 * z.coerce.number() read '' and '  ' as 0 (a blank PORT listened on a random port, a blank rate
 * limit switched the limit off) and '0x10' as 16, and let 1e99 through where nothing bounded it;
 * here a number is written in decimal, is finite and lies in a stated range, or it is refused.
 */
import { z } from 'zod';

/** Node's timers take at most 2^31 − 1 ms; a longer delay fires after 1 ms (a busy loop, not a wait). */
export const MAX_TIMER_MS = 2_147_483_647;
/** The upper bound of settings in seconds or hours: a year, past which no setting means anything. */
export const YEAR_SECONDS = 31_536_000;
export const YEAR_HOURS = 8_760;

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
const shown = (raw: unknown) => JSON.stringify(String(raw));

interface Range {
  min: number;
  max: number;
  /** Fractions allowed (rates, hours, fractions of a device's time); else whole numbers only. */
  fraction?: boolean;
}

function readNumber(raw: string | number, { min, max, fraction }: Range): number | string {
  const n = typeof raw === 'number' ? raw : DECIMAL.test(raw.trim()) ? Number(raw) : NaN;
  const ok = Number.isFinite(n) && (fraction || Number.isInteger(n)) && n >= min && n <= max;
  return ok ? n : `must be ${fraction ? 'a number' : 'an integer'} from ${min} to ${max}; got ${shown(raw)}`;
}

/** A number in [min, max]: whole unless `fraction`. */
export function numberIn(range: Range) {
  return z.union([z.string(), z.number()]).transform((raw, ctx) => {
    const n = readNumber(raw, range);
    if (typeof n === 'number') return n;
    ctx.addIssue({ code: 'custom', message: n });
    return z.NEVER;
  });
}

/** Milliseconds handed to a timer: whole, at least `min`, at most what a timer can wait. */
export const millis = (min: number, max = MAX_TIMER_MS) => numberIn({ min, max });

/** A TCP port; 0 means "off" or "any free port", as the variable's doc says. */
export const port = () => numberIn({ min: 0, max: 65_535 });

/** `off`, or a number in the range. */
export function offOr(range: Range) {
  return z.union([z.string(), z.number()]).transform((raw, ctx): number | 'off' => {
    if (raw === 'off') return 'off';
    const n = readNumber(raw, range);
    if (typeof n === 'number') return n;
    ctx.addIssue({ code: 'custom', message: `must be off or ${n.slice('must be '.length)}` });
    return z.NEVER;
  });
}

/** One of a fixed list of words, named in the refusal. */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, {
    error: (i) => `must be one of ${values.join(', ')}; got ${shown(i.input)}`,
  });
}

/** `on` or `off`, with its default. */
export const onOff = (fallback: 'on' | 'off') => oneOf(['on', 'off']).default(fallback);

/** A URL of one of these schemes; the value is not repeated in the refusal (it may hold a password). */
export function urlOf(...protocols: string[]) {
  const accepted = protocols.map((p) => `${p}//`).join(' or ');
  return z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    { message: `must be a URL starting with ${accepted}` },
  );
}

/** Text that must not be blank: a blank HOST listened on every interface, a blank path meant the working folder. */
export const nonBlank = () => z.string().refine((v) => v.trim() !== '', { message: 'must not be empty' });

/** A variable the process cannot run without. */
export const required = (what: string) =>
  z.string({ error: `required: ${what}` }).refine((v) => v.trim() !== '', { message: `required: ${what}` });
