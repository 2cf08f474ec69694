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

const samePath = (a: Issue, b: Issue) =>
  a.path.length === b.path.length && a.path.every((p, i) => p === b.path[i]);

/**
 * The issue to report: the first, unless the same field also broke a tighter bound. Zod checks an
 * integer against the safe-integer range as well as the schema's own bound, and `steps: 1e300` was
 * answered "expected int to be <=9007199254740991" where the limit is 1,000,000.
 */
function reported(issues: readonly Issue[]): Issue {
  const first = issues[0]!;
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
  const issue = reported(r.error.issues);
  const param = paramOf(issue, prefix);
  throw new ApiError('invalid_request', describe(issue, param), param || null);
}
