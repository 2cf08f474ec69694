/**
 * Pausing and resuming a job, by its tenant: what `scontrol hold`/`release` are to Slurm and
 * `spec.suspend` to Kueue. Pausing marks the row (`paused_at`) and nothing else: the scheduler's
 * rounds place no paused job, and give a running one a preemption notice (reason `pause`), so it
 * checkpoints and leaves its devices through the one path every preemption takes. Resuming clears
 * the mark; the next round orders the job again. Both are idempotent, and refused (409) once the job
 * has finished. A paused job stays active for the tenant's quota: it holds its place.
 */
import type pg from 'pg';
import { jobChange, type JobChange } from './job-change.js';

const changeSql = (set: string, when: string, event: string) => `
WITH prev AS (
  SELECT * FROM jobs WHERE id = $1 AND tenant_id = $2 FOR UPDATE
), j AS (
  UPDATE jobs SET ${set}, updated_at = now()
    FROM prev
   WHERE jobs.id = prev.id AND prev.status NOT IN ('succeeded', 'failed', 'cancelled') AND ${when}
  RETURNING jobs.*
), e AS (
  INSERT INTO job_events (job_id, type, data)
  SELECT j.id, '${event}', jsonb_build_object('status', j.status) FROM j
  RETURNING id
)
SELECT (SELECT id FROM e) AS event_id,
       coalesce((SELECT row_to_json(j) FROM j), row_to_json(prev)) AS job
  FROM prev`;

const PAUSE_SQL = changeSql('paused_at = now()', 'prev.paused_at IS NULL', 'job.paused');
// A resumed job enters the queue again: its wait, and the aging bound, count from now, not from
// before the pause (Slurm's age factor counts from the eligible time a release sets).
const RESUME_SQL = changeSql(
  `paused_at = NULL, queued_at = CASE WHEN jobs.status = 'queued' THEN now() ELSE jobs.queued_at END`,
  'prev.paused_at IS NOT NULL',
  'job.resumed',
);

async function change(pool: pg.Pool, sql: string, tenantId: string, jobId: string): Promise<JobChange> {
  return jobChange((await pool.query(sql, [jobId, tenantId])).rows[0]);
}

export const pauseJob = (pool: pg.Pool, tenantId: string, jobId: string) =>
  change(pool, PAUSE_SQL, tenantId, jobId);

export const resumeJob = (pool: pg.Pool, tenantId: string, jobId: string) =>
  change(pool, RESUME_SQL, tenantId, jobId);
