/**
 * A job of the calling tenant by id: another tenant's job reads as missing, so that its existence
 * cannot be probed (every tenant route on `/v1/jobs/{id}` goes through here).
 */
import type pg from 'pg';
import { notFound } from '../../common/errors.js';
import { uuidParam } from '../http/schemas.js';
import { jobFromRow, type JobRecord } from './serialize.js';

export async function findOwnJob(pool: pg.Pool, tenantId: string, id: string): Promise<JobRecord | null> {
  const q = await pool.query('SELECT * FROM jobs WHERE id = $1 AND tenant_id = $2', [id, tenantId]);
  return q.rows[0] ? jobFromRow(q.rows[0]) : null;
}

/** The same from a route's `{id}`: not a UUID, missing and another tenant's all answer 404 `job`. */
export async function requireOwnJob(pool: pg.Pool, tenantId: string, id: unknown): Promise<JobRecord> {
  if (!uuidParam.safeParse(id).success) throw notFound('job');
  const job = await findOwnJob(pool, tenantId, id as string);
  if (!job) throw notFound('job');
  return job;
}
