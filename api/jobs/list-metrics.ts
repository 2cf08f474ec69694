/**
 * A job's metric points, by step then name, filtered by name and a step range, in pages: a job of
 * 1,200 steps writes ~14,000 points, more than one page holds, and a page that ended without
 * saying so left clients' curves stopping short of the last step.
 */
import type pg from 'pg';
import { ApiError } from '../../common/errors.js';
import { decodeCursor, encodeCursor, page } from '../http/cursor.js';
import { toWireNumber, type WireNumber } from '../../common/node-protocol/fields.js';

export interface MetricFilter {
  name?: string | undefined;
  fromStep?: number | undefined;
  toStep?: number | undefined;
  limit: number;
  /** The `nextCursor` of the previous page. */
  after?: string | undefined;
}

export interface MetricPoint {
  step: number;
  name: string;
  value: WireNumber;
  createdAt: string;
}

const INT4_MAX = 2 ** 31 - 1;

/** A page's cursor: the last point's step and name, and the job it belongs to. */
const cursorOf = (jobId: string) => (m: MetricPoint) => encodeCursor(`${m.step}:${m.name}`, jobId);

/** The step and name a cursor continues after; 400 for one this API did not make for this job. */
function after(cursor: string, jobId: string): { step: number; name: string } {
  const { key, id } = decodeCursor(cursor);
  const m = /^(\d{1,10}):([^\0]*)$/.exec(key);
  if (id !== jobId || !m || Number(m[1]) > INT4_MAX)
    throw new ApiError('invalid_request', "after: not a cursor of this job's metrics", 'after');
  return { step: Number(m[1]), name: m[2]! };
}

export async function listMetrics(
  pool: pg.Pool,
  jobId: string,
  f: MetricFilter,
): Promise<{ data: MetricPoint[]; nextCursor: string | null }> {
  const params: unknown[] = [jobId];
  const where = ['job_id = $1'];
  if (f.after !== undefined) {
    const c = after(f.after, jobId);
    where.push(`(step, name) > ($${params.push(c.step)}::int, $${params.push(c.name)}::text)`);
  }
  if (f.name) where.push(`name = $${params.push(f.name)}`);
  if (f.fromStep !== undefined) where.push(`step >= $${params.push(f.fromStep)}`);
  if (f.toStep !== undefined) where.push(`step <= $${params.push(f.toStep)}`);
  const rows = await pool.query(
    `SELECT step, name, value, created_at FROM metrics WHERE ${where.join(' AND ')}
      ORDER BY step, name LIMIT $${params.push(f.limit + 1)}`,
    params,
  );
  const points = rows.rows.map((m) => ({
    step: m.step as number,
    name: m.name as string,
    value: toWireNumber(m.value as number),
    createdAt: (m.created_at as Date).toISOString(),
  }));
  return page(points, f.limit, cursorOf(jobId));
}
