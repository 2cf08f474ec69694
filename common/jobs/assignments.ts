/**
 * What a node is told to run: the jobs placed on it, each with where it resumes from and any
 * preemption notice (common/node-protocol/assignment.ts is the wire shape).
 */
import type pg from 'pg';
import { withStageMap, type AssignmentWire } from '../node-protocol/index.js';
import { resumePoint } from './reports.js';

export async function assignmentsOf(pool: pg.Pool, nodeId: string): Promise<AssignmentWire[]> {
  const rows = await pool.query(
    `SELECT id, tenant_id, status, spec, placement, attempts, max_attempts, priority, queue_seq, preempt_requested_at
       FROM jobs WHERE node_id = $1 AND status IN ('placed', 'running') ORDER BY priority DESC, created_at`,
    [nodeId],
  );
  const data: AssignmentWire[] = [];
  for (const j of rows.rows) {
    const initial =
      (j.spec as { initialCheckpoint?: { jobId: string; checkpointId: string } }).initialCheckpoint ?? null;
    data.push({
      jobId: j.id,
      tenantId: j.tenant_id,
      status: j.status,
      spec: j.spec,
      placement: withStageMap(j.placement),
      attempts: j.attempts,
      maxAttempts: j.max_attempts,
      priority: j.priority,
      queueSeq: j.queue_seq,
      resumeFrom: await resumePoint(pool, j.id, initial),
      preemptRequestedAt: j.preempt_requested_at ? new Date(j.preempt_requested_at).toISOString() : null,
    });
  }
  return data;
}

/**
 * The run of a job that holds devices now (placed or running), or null: what an admin preemption
 * applies to, and names in its control message.
 */
export async function runHoldingDevices(pool: pg.Pool, jobId: string): Promise<number | null> {
  const q = await pool.query(`SELECT queue_seq FROM jobs WHERE id = $1 AND status IN ('placed', 'running')`, [
    jobId,
  ]);
  return q.rows[0] ? (q.rows[0].queue_seq as number) : null;
}
