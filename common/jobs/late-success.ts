/**
 * A run the scheduler requeued `node_lost` may have finished all its steps before its daemon lost
 * the control plane, its `succeeded` waiting in the daemon's outbox (a database outage past the
 * node timeout: the daemon stopped speaking for its jobs, the sweep found the node lost once the
 * database was back, and the outbox delivered the outcome after that). While the job waits in the
 * queue for its next run, not placed yet (reports.ts LATE_RUN_GUARD), nothing has run since: the
 * job succeeded, and running it again from its last checkpoint (or from step 0) would only redo
 * finished work. Its `job.succeeded` event says it came late (`late`, the run's `queueSeq` and the
 * node). Once the next run is placed, the late success only gives back the attempt the `node_lost`
 * requeue used (refund-lost-run.ts), and the job runs on. Before, a QA run's job that had done
 * 30/30 steps was sent back to the queue at step 0.
 */
import type pg from 'pg';
import type { FinishReason } from '../node-protocol/index.js';
import { LATE_RUN_GUARD } from './reports.js';
import type { Transitioned } from './transitions.js';

/** queued → succeeded for a late `succeeded` of run `queueSeq` from `nodeId`; null when the guard fails. */
export async function finishLateSuccess(
  pool: pg.Pool,
  jobId: string,
  nodeId: string,
  queueSeq: number,
  reason: FinishReason | null,
): Promise<Transitioned | null> {
  const r = await pool.query(
    `WITH prev AS (
       SELECT id, tenant_id FROM jobs WHERE id = $1 AND ${LATE_RUN_GUARD('jobs', '$2', '$3')} FOR UPDATE
     ), j AS (
       UPDATE jobs SET status = 'succeeded', last_error = NULL, finish_reason = $4, finished_at = now(),
                       wait_reason = NULL, updated_at = now()
         FROM prev WHERE jobs.id = prev.id
       RETURNING jobs.*
     ), q AS (
       -- The requeue gave back its devices; the job stopped being active only now.
       UPDATE quotas SET active_jobs = GREATEST(active_jobs - 1, 0) FROM prev WHERE quotas.tenant_id = prev.tenant_id
     ), e AS (
       INSERT INTO job_events (job_id, type, data)
       SELECT id, 'job.succeeded', jsonb_build_object('status', 'succeeded', 'error', NULL, 'reason', $4::text,
                                                     'late', true, 'queueSeq', $3::int, 'nodeId', $2::text) FROM j
       RETURNING id
     )
     SELECT j.*, (SELECT array_agg(id) FROM e) AS event_ids FROM j`,
    [jobId, nodeId, queueSeq, reason],
  );
  const row = r.rows[0];
  if (!row) return null;
  const eventIds = ((row.event_ids as (string | number)[] | null) ?? []).map(String);
  delete row.event_ids;
  return { job: row, eventIds };
}
