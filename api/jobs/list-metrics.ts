/** A job's metric points, by step then name, filtered by name and a step range. */
import type pg from 'pg';
import { toWireNumber, type WireNumber } from '../../common/node-protocol/fields.js';

export interface MetricFilter {
  name?: string | undefined;
  fromStep?: number | undefined;
  toStep?: number | undefined;
  limit: number;
}

export interface MetricPoint {
  step: number;
  name: string;
  value: WireNumber;
  createdAt: string;
}

export async function listMetrics(pool: pg.Pool, jobId: string, f: MetricFilter): Promise<MetricPoint[]> {
  const params: unknown[] = [jobId];
  const where = ['job_id = $1'];
  if (f.name) where.push(`name = $${params.push(f.name)}`);
  if (f.fromStep !== undefined) where.push(`step >= $${params.push(f.fromStep)}`);
  if (f.toStep !== undefined) where.push(`step <= $${params.push(f.toStep)}`);
  const rows = await pool.query(
    `SELECT step, name, value, created_at FROM metrics WHERE ${where.join(' AND ')}
      ORDER BY step, name LIMIT $${params.push(f.limit)}`,
    params,
  );
  return rows.rows.map((m) => ({
    step: m.step,
    name: m.name,
    value: toWireNumber(m.value as number),
    createdAt: (m.created_at as Date).toISOString(),
  }));
}
