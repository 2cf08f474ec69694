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
  const issue = r.error.issues[0]!;
  const param = paramOf(issue, prefix);
  throw new ApiError('invalid_request', describe(issue, param), param || null);
}
