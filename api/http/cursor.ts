/**
 * Opaque keyset cursors for list pages: the sort key of the last item and its id, so that the next
 * page starts after it whatever was inserted meanwhile. Clients only echo them back.
 */
import { ApiError } from '../../common/errors.js';
import { uuidParam } from './schemas.js';

export const encodeCursor = (key: string, id: string): string =>
  Buffer.from(`${key}|${id}`).toString('base64url');

const notACursor = () => new ApiError('invalid_request', 'after: not a cursor returned by this API', 'after');

/** The key and id of a cursor; 400 for anything this API did not make. */
export function decodeCursor(after: string): { key: string; id: string } {
  const raw = Buffer.from(after, 'base64url').toString('utf8');
  const bar = raw.lastIndexOf('|');
  const id = raw.slice(bar + 1);
  if (bar < 0 || !uuidParam.safeParse(id).success) throw notACursor();
  return { key: raw.slice(0, bar), id };
}

/**
 * A cursor whose key is a timestamp, exactly as `toISOString()` wrote it. `Date` parses far more
 * (years ±271,821, bare numbers) than PostgreSQL's timestamptz holds, and a date outside its range
 * failed in the database (a 500); every row's time fits the four-digit-year form.
 */
export function decodeTimeCursor(after: string): { at: Date; id: string } {
  const { key, id } = decodeCursor(after);
  const at = new Date(key);
  if (!/^\d{4}-/.test(key) || Number.isNaN(at.getTime()) || at.toISOString() !== key) throw notACursor();
  return { at, id };
}

/** A cursor whose key is a bigint column's value (an event id), as `String()` wrote it. */
export function decodeBigintCursor(after: string): { key: string; id: string } {
  const c = decodeCursor(after);
  if (!/^\d{1,19}$/.test(c.key) || BigInt(c.key) > 2n ** 63n - 1n) throw notACursor();
  return c;
}

/** The page and the cursor of the next one, from a query that fetched `limit + 1` rows. */
export function page<T>(rows: T[], limit: number, cursorOf: (last: T) => string) {
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  return { data, nextCursor: rows.length > limit && last ? cursorOf(last) : null };
}
