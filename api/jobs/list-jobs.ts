/** A page of a tenant's jobs, newest first, after a keyset cursor (created_at, id). */
import type pg from 'pg';
import { jobFromRow, type JobRecord } from './serialize.js';

export interface JobFilter {
  status?: string | undefined;
  name?: string | undefined;
  after?: { at: Date; id: string } | null;
  /** Rows to return; the caller asks one more than its page to know whether another follows. */
  limit: number;
}

export async function listJobs(pool: pg.Pool, tenantId: string, f: JobFilter): Promise<JobRecord[]> {
  const params: unknown[] = [tenantId];
  const where = ['tenant_id = $1'];
  if (f.status) where.push(`status = $${params.push(f.status)}`);
  if (f.name) where.push(`name = $${params.push(f.name)}`);
  if (f.after) where.push(`(created_at, id) < ($${params.push(f.after.at)}, $${params.push(f.after.id)})`);
  const rows = await pool.query(
    `SELECT * FROM jobs WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT $${params.push(f.limit)}`,
    params,
  );
  return rows.rows.map(jobFromRow);
}
