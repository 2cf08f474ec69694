import type { z } from 'zod';
import { ApiError } from '../../common/errors.js';

type Issue = z.core.$ZodIssue;

function paramOf(issue: Issue, prefix: string | null): string {
  const parts = issue.path.map(String);
  if (issue.code === 'unrecognized_keys' && issue.keys[0]) parts.push(issue.keys[0]);
  const p = parts.join('.');
  return prefix ? (p ? `${prefix}.${p}` : prefix) : p;
}

function describe(issue: Issue, param: string): string {
  if (issue.code === 'unrecognized_keys') return `unknown field "${param}"`;
  return param ? `${param}: ${issue.message}` : issue.message;
}

const samePath = (a: Pick<Issue, 'path'>, b: Pick<Issue, 'path'>) =>
  a.path.length === b.path.length && a.path.every((p, i) => p === b.path[i]);

/** Whether the object at `path` in `data` lacks the path's last key (a field not sent at all). */
function missing(data: unknown, path: readonly PropertyKey[]): boolean {
  let at = data;
  for (const key of path.slice(0, -1)) {
    if (typeof at !== 'object' || at === null) return false;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  const last = path[path.length - 1];
  return (
    last !== undefined &&
    typeof at === 'object' &&
    at !== null &&
    !Array.isArray(at) &&
    !Object.hasOwn(at, last)
  );
}

/**
 * The issue to report: the first, unless it is a field left out of an object that also has an
 * unknown one (reported instead: see below), or the same field also broke a tighter bound. Zod
 * checks an integer against the safe-integer range as well as the schema's own bound, and
 * `steps: 1e300` was answered "expected int to be <=9007199254740991" where the limit is 1,000,000.
 */
function reported(issues: readonly Issue[], data: unknown): Issue {
  const first = issues[0]!;
  if (first.code === 'invalid_type' && missing(data, first.path)) {
    // A field left out beside an unknown one is most often a typo of it (`{"wieght": 2}` was
    // answered "weight: expected number, received undefined"): name the field that was sent.
    const parent = first.path.slice(0, -1);
    const unknown = issues.find((i) => i.code === 'unrecognized_keys' && samePath(i, { path: parent }));
    if (unknown) return unknown;
  }
  if (first.code !== 'too_big' && first.code !== 'too_small') return first;
  let best = first;
  for (const i of issues) {
    if (i.code !== first.code || !samePath(i, first)) continue;
    if (i.code === 'too_big' && best.code === 'too_big' && Number(i.maximum) < Number(best.maximum)) best = i;
    if (i.code === 'too_small' && best.code === 'too_small' && Number(i.minimum) > Number(best.minimum))
      best = i;
  }
  return best;
}

/**
 * Validates and returns the parsed value, or throws a 400 `invalid_request` whose `param` names the
 * first offending field (dotted path, as clients address it).
 */
export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  data: unknown,
  prefix: string | null = null,
): z.output<S> {
  const r = schema.safeParse(data);
  if (r.success) return r.data;
  const issue = reported(r.error.issues, data);
  const param = paramOf(issue, prefix);
  throw new ApiError('invalid_request', describe(issue, param), param || null);
}
