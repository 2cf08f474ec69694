/**
 * The parsers of every numeric option of the CLI. `Number('abc')` is NaN, which JSON writes as
 * null, and the API's refusal then names a body field rather than what was typed; refused here,
 * commander's error names the option and its value, and no request is sent.
 */
import { InvalidArgumentError } from 'commander';

// Number() reads '' and '  ' as 0: a blank value is no number either.
const blank = (value: string) => value.trim() === '';

/** Any finite number: seconds, hours, weights. */
export function parseNumber(value: string): number {
  const n = Number(value);
  if (blank(value) || !Number.isFinite(n)) throw new InvalidArgumentError('Not a number.');
  return n;
}

/** A whole number: counts, limits, steps (the API refuses 2.5 jobs). */
export function parseInteger(value: string): number {
  const n = Number(value);
  if (blank(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('Not an integer.');
  return n;
}
