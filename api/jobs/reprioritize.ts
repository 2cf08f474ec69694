/**
 * Changing a job's priority after submission, by its tenant (what `scontrol update priority=` is to
 * Slurm): the column the scheduler orders by and the spec's name for it change together, with a
 * `job.priority_changed` event, in one statement. Priority orders a tenant's own jobs and lets a
 * tenant's higher-priority job preempt its lower ones; it never moves a job ahead of another
 * tenant's (fair share decides that). Idempotent; refused (409) once the job has finished.
 */
import type pg from 'pg';
import { priorityLevels, type PriorityName } from '../../common/job-status.js';
import { jobChange, type JobChange } from './job-change.js';

const REPRIORITIZE_SQL = `
WITH prev AS (
  SELECT * FROM jobs WHERE id = $1 AND tenant_id = $2 FOR UPDATE
), j AS (
  UPDATE jobs SET priority = $3, spec = jsonb_set(jobs.spec, '{priority}', to_jsonb($4::text)), updated_at = now()
    FROM prev
   WHERE jobs.id = prev.id AND prev.status NOT IN ('succeeded', 'failed', 'cancelled') AND prev.priority <> $3
  RETURNING jobs.*
), e AS (
  INSERT INTO job_events (job_id, type, data)
  SELECT j.id, 'job.priority_changed', jsonb_build_object('status', j.status, 'from', prev.spec->>'priority', 'to', $4::text)
    FROM j, prev
  RETURNING id
)
SELECT (SELECT id FROM e) AS event_id,
       coalesce((SELECT row_to_json(j) FROM j), row_to_json(prev)) AS job
  FROM prev`;

export async function reprioritizeJob(
  pool: pg.Pool,
  tenantId: string,
  jobId: string,
  priority: PriorityName,
): Promise<JobChange> {
  const r = await pool.query(REPRIORITIZE_SQL, [jobId, tenantId, priorityLevels[priority], priority]);
  return jobChange(r.rows[0]);
}
