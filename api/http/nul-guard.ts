/**
 * PostgreSQL stores no NUL character, in text or in jsonb, so a request body string holding one
 * would fail in the database (a 500) wherever it is stored. Refused at the edge for every body, with
 * the field named. JSON can only carry NUL escaped as `\u0000`, so the walk runs only for a body
 * whose text has that sequence: the submission hot path pays one substring search.
 */
import { ApiError } from '../../common/errors.js';

export const NUL_ESCAPE = '\\u0000';

/** The dotted path of the first string (key or value) holding NUL, or null. */
export function findNul(value: unknown, path: string[] = []): string[] | null {
  if (typeof value === 'string') return value.includes('\0') ? path : null;
  if (value === null || typeof value !== 'object') return null;
  for (const [k, v] of Object.entries(value)) {
    if (k.includes('\0')) return [...path, k];
    const found = findNul(v, [...path, k]);
    if (found) return found;
  }
  return null;
}

/** Throws a 400 naming the field when a parsed body (whose text may hold `\u0000`) holds NUL. */
export function refuseNul(text: string | Buffer, body: unknown): void {
  if (!text.includes(NUL_ESCAPE)) return;
  const path = findNul(body);
  if (!path) return;
  const param = path.join('.');
  throw new ApiError('invalid_request', `${param || 'body'}: must not contain NUL characters`, param || null);
}
