/**
 * A job of the calling tenant by id: another tenant's job reads as missing, so that its existence
 * cannot be probed (every tenant route on `/v1/jobs/{id}` goes through here).
 */
import type pg from 'pg';
import { jobFromRow, type JobRecord } from './serialize.js';

export async function findOwnJob(pool: pg.Pool, tenantId: string, id: string): Promise<JobRecord | null> {
  const q = await pool.query('SELECT * FROM jobs WHERE id = $1 AND tenant_id = $2', [id, tenantId]);
  return q.rows[0] ? jobFromRow(q.rows[0]) : null;
}
