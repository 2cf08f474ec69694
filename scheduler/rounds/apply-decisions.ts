/**
 * Writes a round's decisions in one transaction, under the leader's epoch: take-backs, placements,
 * withdrawn and new preemption notices, changed wait reasons and decayed usage. The lease row is
 * read FOR SHARE first (a takeover waits for this transaction), and the fencing trigger re-checks
 * the epoch on every decision row: a deposed leader's transaction fails as a whole and writes nothing.
 * Placements are guarded by the row still being queued under the same queue_seq, so a job
 * cancelled or changed since the snapshot is simply not placed, and by the node not being cordoned.
 */
import { replanEventTypes } from '../planner/replan.js';
import type pg from 'pg';
import type { Decisions } from '../core/types.js';
import { LEASE_NAME } from './leader.js';

export interface Applied {
  /** Committed event ids per job, to announce after the commit. */
  events: Map<string, string[]>;
  /** Nodes whose assignments changed. */
  nodes: Set<string>;
  /** Jobs given a preemption notice now, each with the run the notice is for (its control message names it). */
  noticed: { jobId: string; queueSeq: number }[];
  placed: number;
  takenBack: number;
}

export class DeposedError extends Error {
  constructor(readonly epoch: number) {
    super(`scheduler epoch ${epoch} is no longer the leader's`);
    this.name = 'DeposedError';
  }
}

// Event ids come back grouped per job (joining them back to the updated rows made PostgreSQL nest
// loops over two CTE scans: seconds for thousands of placements); the node of each job is known
// from the decisions and the snapshot.
function collect(
  out: Applied,
  rows: { job_id: string; event_ids: (string | number)[] }[],
  nodeOf: (jobId: string) => string | undefined,
) {
  for (const r of rows) {
    out.events.set(r.job_id, [...(out.events.get(r.job_id) ?? []), ...r.event_ids.map(String)]);
    const node = nodeOf(r.job_id);
    if (node) out.nodes.add(node);
  }
}

const TAKE_BACK = `
WITH prev AS (
  SELECT j.id, j.devices, j.tenant_id, j.node_id, j.preempt_reason FROM jobs j
   WHERE j.id = ANY($1::uuid[]) AND j.status IN ('placed', 'running') AND j.preempt_requested_at IS NOT NULL
     FOR UPDATE
), j AS (
  UPDATE jobs SET status = 'queued', queue_seq = queue_seq + 1, node_id = NULL, placement = NULL,
                  queued_at = now(), requeue_reason = 'preempted', preempt_requested_at = NULL,
                  preempt_reason = NULL, preemptions = preemptions + 1,
                  interruptions = interruptions + CASE WHEN jobs.status = 'running' THEN 1 ELSE 0 END,
                  wait_reason = 'preempted',
                  sched_epoch = $2, updated_at = now()
    FROM prev WHERE jobs.id = prev.id
  RETURNING jobs.id, prev.tenant_id, prev.devices, prev.node_id AS from_node, prev.preempt_reason
), q AS (
  UPDATE quotas SET active_devices = GREATEST(active_devices - s.n, 0)
    FROM (SELECT tenant_id, sum(devices)::int AS n FROM j GROUP BY tenant_id) s WHERE quotas.tenant_id = s.tenant_id
), e AS (
  INSERT INTO job_events (job_id, type, data)
  SELECT id, 'job.preempted', jsonb_build_object('status', 'preempted', 'nodeId', from_node,
                                                 'reason', preempt_reason, 'graceExpired', true) FROM j
  UNION ALL
  SELECT id, 'job.queued', jsonb_build_object('status', 'queued', 'reason', 'preempted', 'nodeId', from_node) FROM j
  RETURNING id, job_id
)
SELECT e.job_id, array_agg(e.id ORDER BY e.id) AS event_ids FROM e GROUP BY e.job_id`;

const PLACE = `
WITH v AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS v(id uuid, queue_seq int, node_id uuid, placement jsonb, n int, plan jsonb)
), open AS MATERIALIZED (
  -- Nodes an admin cordoned since the snapshot take nothing. Locked (KEY SHARE: heartbeats still
  -- update them) so that a cordon (api/nodes/cordon.ts, FOR UPDATE) waits for this commit: once
  -- it is answered, no placement lands on the node.
  SELECT id FROM nodes WHERE id IN (SELECT node_id FROM v) AND cordoned_at IS NULL FOR KEY SHARE
), j AS (
  UPDATE jobs SET status = 'placed', node_id = v.node_id, placement = v.placement, devices = v.n,
                  wait_reason = NULL, placed_at = now(), placement_device_seconds = 0, run_started_at = NULL, sched_epoch = $2,
                  updated_at = now()
    FROM v WHERE jobs.id = v.id AND jobs.status = 'queued' AND jobs.queue_seq = v.queue_seq
           AND jobs.paused_at IS NULL -- paused since the snapshot: not placed, as a job cancelled meanwhile
           AND v.node_id IN (SELECT id FROM open)
  RETURNING jobs.id, jobs.tenant_id, jobs.node_id, jobs.devices, jobs.placement
), q AS (
  UPDATE quotas SET active_devices = active_devices + s.n, updated_at = now()
    FROM (SELECT tenant_id, sum(devices)::int AS n FROM j GROUP BY tenant_id) s WHERE quotas.tenant_id = s.tenant_id
), e AS (
  INSERT INTO job_events (job_id, type, data)
  SELECT id, 'job.admitted', jsonb_build_object('status', 'admitted', 'epoch', $2::bigint) FROM j
  UNION ALL
  SELECT j.id, 'job.placed', jsonb_build_object('status', 'placed', 'placement', j.placement, 'plan', v.plan, 'epoch', $2::bigint)
    FROM j JOIN v ON v.id = j.id
  RETURNING id, job_id
)
SELECT e.job_id, array_agg(e.id ORDER BY e.id) AS event_ids FROM e GROUP BY e.job_id`;

const NOTICE = `
WITH v AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS v(id uuid, reason text, for_job uuid, move_to jsonb)
), j AS (
  UPDATE jobs SET preempt_requested_at = now(), preempt_reason = v.reason, sched_epoch = $2, updated_at = now()
    FROM v WHERE jobs.id = v.id AND jobs.status IN ('placed', 'running') AND jobs.preempt_requested_at IS NULL
  RETURNING jobs.id, jobs.node_id, jobs.queue_seq, v.reason, v.for_job, v.move_to
), e AS (
  INSERT INTO job_events (job_id, type, data)
  SELECT id, 'job.preempting', jsonb_strip_nulls(jsonb_build_object('reason', reason, 'forJobId', for_job,
                                                  'moveTo', move_to,
                                                  'graceSeconds', $3::float8, 'epoch', $2::bigint)) FROM j
  RETURNING id, job_id
)
SELECT e.job_id, j.queue_seq, array_agg(e.id ORDER BY e.id) AS event_ids
  FROM e JOIN j ON j.id = e.job_id GROUP BY e.job_id, j.queue_seq`;

/**
 * Notices whose reason went (scheduler/core/withdraw.ts): the job keeps its devices. Only the notice
 * the round saw (still out, same reason); the node is told (its assignment no longer carries the
 * notice), so that a job still before its checkpoint runs on rather than stop for nothing.
 */
const WITHDRAW = `
WITH v AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS v(id uuid, reason text, because text)
), j AS (
  UPDATE jobs SET preempt_requested_at = NULL, preempt_reason = NULL, sched_epoch = $2, updated_at = now()
    FROM v WHERE jobs.id = v.id AND jobs.status IN ('placed', 'running')
           AND jobs.preempt_requested_at IS NOT NULL AND jobs.preempt_reason = v.reason
  RETURNING jobs.id, jobs.queue_seq, v.reason, v.because
), e AS (
  INSERT INTO job_events (job_id, type, data)
  SELECT id, 'job.preempt_withdrawn', jsonb_build_object('reason', reason, 'because', because,
                                                         'queueSeq', queue_seq, 'epoch', $2::bigint) FROM j
  RETURNING id, job_id
)
SELECT e.job_id, array_agg(e.id ORDER BY e.id) AS event_ids FROM e GROUP BY e.job_id`;

/** Re-planning decisions as job events (the move itself goes through NOTICE as a `replan` preemption). */
const REPLAN = `
WITH v AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS v(id uuid, type text, data jsonb)
), e AS (
  INSERT INTO job_events (job_id, type, data)
  SELECT v.id, v.type, v.data || jsonb_build_object('epoch', $2::bigint)
    FROM v JOIN jobs j ON j.id = v.id WHERE j.status IN ('placed', 'running')
  RETURNING id, job_id
)
SELECT e.job_id, array_agg(e.id ORDER BY e.id) AS event_ids FROM e GROUP BY e.job_id`;

export interface UsageWrite {
  tenantId: string;
  pool: string;
  deviceSeconds: number;
  memoryByteSeconds: number;
}

export async function applyDecisions(
  pool: pg.Pool,
  lease: { holder: string; epoch: number },
  d: Decisions,
  extra: {
    reasons: { jobId: string; reason: string }[];
    usage: UsageWrite[];
    graceSeconds: number;
    /** The node each running job is on (from the snapshot), to tell it about notices and take-backs. */
    nodeOf?: ReadonlyMap<string, string>;
  },
): Promise<Applied> {
  const placedOn = new Map(d.place.map((p) => [p.jobId, p.nodeId]));
  const nodeOf = (jobId: string) => placedOn.get(jobId) ?? extra.nodeOf?.get(jobId);
  const out: Applied = { events: new Map(), nodes: new Set(), noticed: [], placed: 0, takenBack: 0 };
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const held = await client.query(
      `SELECT 1 FROM scheduler_leases WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp() FOR SHARE`,
      [LEASE_NAME, lease.holder, lease.epoch],
    );
    if (held.rows.length === 0) throw new DeposedError(lease.epoch);
    if (d.takeBack.length) {
      const r = await client.query(TAKE_BACK, [d.takeBack.map((t) => t.jobId), lease.epoch]);
      collect(out, r.rows, nodeOf);
      out.takenBack = r.rows.length;
    }
    if (d.place.length) {
      const rows = d.place.map((p) => ({
        id: p.jobId,
        queue_seq: p.queueSeq,
        node_id: p.nodeId,
        n: p.devices.length,
        // What the planner predicted, kept with the decision so measured steps can be set beside it.
        plan: {
          mode: p.plan.mode,
          microBatches: p.plan.microBatches,
          partialTail: p.plan.partialTail,
          predictedStepSeconds: p.plan.predictedStepSeconds,
          stepSeconds: p.plan.stepSeconds,
          confidence: p.plan.confidence,
        },
        placement: {
          nodeId: p.nodeId,
          devices: p.devices,
          mode: p.mode,
          stages: p.stages,
          ...(p.mode === 'temporal' ? {} : { microBatches: p.plan.microBatches }),
          ...(p.mode === 'temporal' && p.plan.partialTail > 0 ? { partialTail: p.plan.partialTail } : {}),
          threadsPerDevice: p.threadsPerDevice,
          memoryBytes: p.memoryBytes,
          epoch: lease.epoch,
        },
      }));
      const r = await client.query(PLACE, [JSON.stringify(rows), lease.epoch]);
      collect(out, r.rows, nodeOf);
      out.placed = r.rows.length;
    }
    // Before the notices: a job whose notice is withdrawn may be given a new one in the same round.
    if (d.withdraw.length) {
      const rows = d.withdraw.map((w) => ({ id: w.jobId, reason: w.reason, because: w.because }));
      const r = await client.query(WITHDRAW, [JSON.stringify(rows), lease.epoch]);
      collect(out, r.rows, nodeOf);
    }
    if (d.preempt.length) {
      const rows = d.preempt.map((p) => ({
        id: p.jobId,
        reason: p.reason,
        for_job: p.forJobId,
        move_to: p.moveTo ?? null,
      }));
      const r = await client.query(NOTICE, [JSON.stringify(rows), lease.epoch, extra.graceSeconds]);
      collect(out, r.rows, nodeOf);
      out.noticed = r.rows.map((row) => ({ jobId: row.job_id as string, queueSeq: row.queue_seq as number }));
    }
    if (d.replan.length) {
      const rows = d.replan.map(({ jobId, tenantId: _t, kind, ...data }) => ({
        id: jobId,
        type: replanEventTypes[kind],
        data,
      }));
      const r = await client.query(REPLAN, [JSON.stringify(rows), lease.epoch]);
      collect(out, r.rows, nodeOf);
    }
    if (extra.reasons.length) {
      await client.query(
        `UPDATE jobs SET wait_reason = v.r FROM unnest($1::uuid[], $2::text[]) AS v(id, r)
          WHERE jobs.id = v.id AND jobs.status = 'queued' AND jobs.wait_reason IS DISTINCT FROM v.r`,
        [extra.reasons.map((x) => x.jobId), extra.reasons.map((x) => x.reason)],
      );
    }
    if (extra.usage.length) {
      await client.query(
        `INSERT INTO tenant_usage (tenant_id, pool, device_seconds, memory_byte_seconds, updated_at)
         SELECT * , now() FROM unnest($1::uuid[], $2::text[], $3::float8[], $4::float8[])
         ON CONFLICT (tenant_id, pool) DO UPDATE SET device_seconds = EXCLUDED.device_seconds,
           memory_byte_seconds = EXCLUDED.memory_byte_seconds, updated_at = EXCLUDED.updated_at`,
        [
          extra.usage.map((u) => u.tenantId),
          extra.usage.map((u) => u.pool),
          extra.usage.map((u) => u.deviceSeconds),
          extra.usage.map((u) => u.memoryByteSeconds),
        ],
      );
    }
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    // The fencing trigger's refusal is a deposition too.
    if ((err as { code?: string }).code === 'TSF01') throw new DeposedError(lease.epoch);
    throw err;
  } finally {
    client.release();
  }
}
