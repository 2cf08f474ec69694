/**
 * Cancellation, valid in every non-final state and idempotent: cancelling a cancelled job returns
 * it unchanged. The row changes first (with the quota's active count and the event, in one
 * transaction); then the queue entry is removed and workers are told to stop it.
 */
import type pg from 'pg';
import { ApiError, notFound } from '../../common/errors.js';
import { jobFromRow, type JobRecord } from './serialize.js';

export interface Cancelled {
  job: JobRecord;
  /** null when the job was already cancelled (nothing changed). */
  eventId: string | null;
  previousStatus: string;
}

const CANCEL_SQL = `
WITH prev AS (
  SELECT id, status, devices FROM jobs WHERE id = $1 AND tenant_id = $2 FOR UPDATE
), j AS (
  UPDATE jobs SET status = 'cancelled', finished_at = now(), updated_at = now(), wait_reason = NULL,
                  cancel_requested = true
    FROM prev
   WHERE jobs.id = prev.id AND prev.status NOT IN ('succeeded', 'failed', 'cancelled')
  RETURNING jobs.*
), q AS (
  UPDATE quotas SET active_jobs = GREATEST(active_jobs - 1, 0),
                    active_devices = GREATEST(active_devices - CASE WHEN (SELECT status FROM prev)
                                       IN ('placed', 'running') THEN (SELECT devices FROM prev) ELSE 0 END, 0),
                    updated_at = now()
   WHERE tenant_id = $2 AND EXISTS (SELECT 1 FROM j)
), e AS (
  INSERT INTO job_events (job_id, type, data)
  SELECT j.id, 'job.cancelled', jsonb_build_object('status', 'cancelled', 'from', prev.status)
    FROM j, prev
  RETURNING id
)
SELECT prev.status AS previous_status, (SELECT id FROM e) AS event_id,
       (SELECT row_to_json(j) FROM j) AS changed
  FROM prev`;

export async function cancelJob(pool: pg.Pool, tenantId: string, jobId: string): Promise<Cancelled> {
  const r = await pool.query(CANCEL_SQL, [jobId, tenantId]);
  const row = r.rows[0];
  if (!row) throw notFound('job');
  if (row.changed) {
    const changed = row.changed as Record<string, unknown>;
    return { job: jobFromRow(changed), eventId: String(row.event_id), previousStatus: row.previous_status };
  }
  const current = await pool.query('SELECT * FROM jobs WHERE id = $1', [jobId]);
  const job = jobFromRow(current.rows[0]);
  if (job.status !== 'cancelled') {
    throw new ApiError('conflict', `job already finished with status ${job.status}`);
  }
  return { job, eventId: null, previousStatus: row.previous_status };
}
