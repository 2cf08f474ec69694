/**
 * A node the scheduler found lost may only have lost the control plane: its daemon stopped the
 * job itself (worker-node/supervision.ts) before the node timeout, and reports the run
 * `lost_contact` once it is back; or the run ended by itself meanwhile (`succeeded` during an API
 * outage, `preempted` or `drained`), and its outcome arrives late. By then the liveness sweep has
 * requeued the run as `node_lost`, which uses one of the job's attempts (from the control plane a
 * dead node looks like a job that took its node down). The late report is the node showing it was
 * alive and that the run did not end by the job's fault: the run is recounted as an interruption,
 * once, and the job gets the attempt back (`job.attempt_refunded`, with the outcome as its reason).
 * A late `crashed` or `failed` is the job's own doing and keeps the charge. A chaos soak found jobs
 * that succeeded during an API outage charged an attempt for it, then run again from their last
 * checkpoint. A late `succeeded` that arrives while the job still waits for its next run finishes
 * the job instead (late-success.ts); this refund is for one whose next run was placed first.
 */

import type pg from 'pg';
import { interruptedRuns, type Transitioned } from './transitions.js';

/** The late outcomes that show the run did not end by the job's fault: an interruption, or done. */
const REFUNDING_OUTCOMES: ReadonlySet<string> = new Set([...interruptedRuns, 'succeeded']);

/**
 * Recounts run `queueSeq` of `jobId` as interrupted when it ended `node_lost` while placed on
 * `nodeId` after it started, the node's late `outcome` for it is one of REFUNDING_OUTCOMES, the
 * job is not finished, and the run was not recounted before. Null when any of that fails.
 */
export async function refundLostRun(
  pool: pg.Pool,
  jobId: string,
  nodeId: string,
  queueSeq: number,
  outcome: string,
): Promise<Transitioned | null> {
  if (!REFUNDING_OUTCOMES.has(outcome)) return null;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // The row lock orders concurrent deliveries of the same report: the second reads the first's
    // refund event (each statement below sees what committed before it ran).
    const locked = await client.query(
      `SELECT 1 FROM jobs WHERE id = $1 AND status NOT IN ('succeeded', 'failed', 'cancelled') FOR UPDATE`,
      [jobId],
    );
    if (locked.rows.length === 0) return await rollback(client);
    // Only a run that started (a `job.running` after the job's previous return to the queue) used
    // an attempt: one lost while still placed used none, and recounting it gave the job attempts
    // it never spent (interruptions above attempts).
    const lost = await client.query(
      `SELECT 1 FROM job_events l
        WHERE l.job_id = $1 AND l.type = 'job.queued' AND l.data->>'reason' = 'node_lost'
          AND l.data->>'nodeId' = $2::text AND (l.data->>'queueSeq')::int = $3
          AND NOT EXISTS (SELECT 1 FROM job_events r WHERE r.job_id = $1 AND r.type = 'job.attempt_refunded'
                                                       AND (r.data->>'queueSeq')::int = $3)
          AND EXISTS (SELECT 1 FROM job_events s
                       WHERE s.job_id = $1 AND s.type = 'job.running' AND s.id < l.id
                         AND NOT EXISTS (SELECT 1 FROM job_events q WHERE q.job_id = $1 AND q.type = 'job.queued'
                                                                      AND q.id > s.id AND q.id < l.id))`,
      [jobId, nodeId, queueSeq],
    );
    if (lost.rows.length === 0) return await rollback(client);
    const job = await client.query(
      `UPDATE jobs SET interruptions = interruptions + 1, updated_at = now() WHERE id = $1 RETURNING *`,
      [jobId],
    );
    const event = await client.query(
      `INSERT INTO job_events (job_id, type, data)
       SELECT id, 'job.attempt_refunded',
              jsonb_build_object('queueSeq', $2::int, 'nodeId', $3::text, 'reason', $4::text,
                                 'attempts', attempts, 'interruptions', interruptions, 'maxAttempts', max_attempts)
         FROM jobs WHERE id = $1
       RETURNING id`,
      [jobId, queueSeq, nodeId, outcome],
    );
    await client.query('COMMIT');
    return { job: job.rows[0], eventIds: event.rows.map((r) => String(r.id)) };
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}

async function rollback(client: pg.PoolClient): Promise<null> {
  await client.query('ROLLBACK');
  return null;
}
