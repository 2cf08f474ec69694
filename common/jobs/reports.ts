/**
 * What a running job reports through its node: metrics, stage profiles, device usage, checkpoints.
 * Every write is guarded by the job still being on the reporting node in the reporting run: a
 * checkpoint record by its own statement, the rest by the job row `applyJobReport` (job-report.ts)
 * locks for the report's transaction. One exception: a checkpoint record, or a report's metrics,
 * profiles and device-seconds, of the run just before the job's current one, requeued `node_lost`
 * from this node, while the job waits for its next run (LATE_RUN_GUARD below).
 */
import type pg from 'pg';
import type {
  CheckpointReport,
  MetricPoint,
  SavedCheckpoint,
  StageProfileReport,
  WireMetricPoint,
} from '../node-protocol/index.js';
import { checkpointModelKey } from '../storage/index.js';
import { scaleTo, type DeviceTime } from '../node-protocol/device-time.js';

export type { CheckpointReport, MetricPoint, SavedCheckpoint, StageProfileReport };

/** A client inside the report's transaction, the job row locked for this run (job-report.ts). */
export type InRun = Pick<pg.ClientBase, 'query'>;

/**
 * A step's metric is one row: a job resumed from a checkpoint re-runs the steps after it, and the
 * run that continued overwrites what the lost run had reported — never a second row.
 */
export async function upsertMetrics(tx: InRun, jobId: string, points: WireMetricPoint[]): Promise<number> {
  if (!points.length) return 0;
  const r = await tx.query(
    `INSERT INTO metrics (job_id, step, name, value)
     SELECT $1, s, n, v FROM unnest($2::int[], $3::text[], $4::float8[]) AS t(s, n, v)
     ON CONFLICT (job_id, name, step) DO UPDATE SET value = EXCLUDED.value, created_at = now()`,
    // float8 reads 'NaN', 'Infinity' and '-Infinity' as what they name.
    [jobId, points.map((p) => p.step), points.map((p) => p.name), points.map((p) => String(p.value))],
  );
  return r.rowCount ?? 0;
}

export async function insertProfiles(
  tx: InRun,
  jobId: string,
  nodeId: string,
  profiles: StageProfileReport[],
): Promise<void> {
  if (!profiles.length) return;
  await tx.query(
    `INSERT INTO stage_profiles (job_id, node_id, stage, step, seconds, tokens, batch, devices, peak_bytes, onload_seconds, offload_seconds, occupancy, partial_tail)
     SELECT $1, $2, p.stage, p.step, p.seconds, p.tokens, p.batch, p.devices, p.peak_bytes, p.onload_seconds, p.offload_seconds, p.occupancy, p.partial_tail
       FROM jsonb_to_recordset($3::jsonb) AS p(stage text, step int, seconds float8, tokens int, batch int, devices int,
                                               peak_bytes bigint, onload_seconds float8, offload_seconds float8,
                                               occupancy float8, partial_tail float8)`,
    [
      jobId,
      nodeId,
      JSON.stringify(
        profiles.map((p) => ({
          stage: p.stage,
          step: p.step,
          seconds: p.seconds,
          tokens: p.tokens,
          batch: p.batch,
          devices: p.devices,
          peak_bytes: p.peakBytes,
          onload_seconds: p.onloadSeconds,
          offload_seconds: p.offloadSeconds,
          occupancy: p.occupancy,
          partial_tail: p.partialTail,
        })),
      ),
    ],
  );
}

/**
 * A report's own bookkeeping on its job's row: its number in the run and, for a live run's metrics,
 * the newest step they reach (null: none). Written by the statement that charges the report's
 * device-seconds, so that a report writes the row once (two statements left two row versions a step).
 */
export interface ReportMark {
  reportSeq: number;
  step: number | null;
  /**
   * A late report of the run just before the job's current one (LATE_RUN_GUARD, the job queued):
   * that run. The report is numbered in it, and its device-seconds are bounded by the wall time from
   * that run's placement to its requeue (`queued_at`), not to now: the job has held nothing since.
   */
  lateRun?: number;
}

/**
 * Device-seconds: the ledger row, the job's total and the tenant's period counter, together, each
 * also split by state (running, switching, idle-held; common/node-protocol/device-time.ts). A node
 * cannot charge a tenant more than the job's placement could have used: what is recorded is bounded
 * by the wall time since the job was placed (or first started) × the devices it holds, less what
 * was already recorded since then (kept on the job's row and reset by each placement: summing the
 * ledger took 255 ms a report at a million rows, bench:report), and a bounded charge keeps the
 * states' proportions. The job row is locked (by the report's transaction) so that concurrent
 * reports share the bound. With `mark`, the same update of the job row records the report
 * (`ReportMark`; the progress columns serve api/jobs/serialize.ts), even when it charges nothing.
 * Returns the device-seconds recorded.
 */
export async function recordUsage(
  tx: InRun,
  jobId: string,
  deviceSeconds: number,
  split: DeviceTime = { running: deviceSeconds, switching: 0, idle: 0 },
  mark?: ReportMark,
): Promise<number> {
  const asked = deviceSeconds > 0 ? deviceSeconds : 0;
  if (asked === 0 && !mark) return 0;
  const parts = scaleTo(split, asked);
  const r = await tx.query(
    `WITH j AS (
       SELECT id, tenant_id, coalesce(placed_at, started_at) AS since, placement_device_seconds AS charged,
              coalesce(jsonb_array_length(placement->'devices'), devices) AS held,
              CASE WHEN $9::int IS NULL THEN now() ELSE LEAST(now(), queued_at) END AS until
         FROM jobs WHERE id = $1
     ), b0 AS (
       SELECT j.id, j.tenant_id, CASE WHEN j.since IS NULL THEN 0 ELSE GREATEST(0, LEAST($2::float8,
                extract(epoch FROM j.until - j.since) * j.held - j.charged)) END AS s
         FROM j
     ), parts AS (
       SELECT id, tenant_id, s, k * $3::float8 AS run, k * $4::float8 AS sw, k * $5::float8 AS idle
         FROM b0, LATERAL (SELECT CASE WHEN s > 0 THEN s / $2::float8 ELSE 0 END AS k) share
     ), uj AS (
       UPDATE jobs SET device_seconds = jobs.device_seconds + p.s,
         placement_device_seconds = jobs.placement_device_seconds + p.s,
         running_device_seconds = jobs.running_device_seconds + p.run,
         switching_device_seconds = jobs.switching_device_seconds + p.sw,
         idle_device_seconds = jobs.idle_device_seconds + p.idle,
         reported_run = CASE WHEN $6::bool THEN coalesce($9::int, jobs.queue_seq) ELSE jobs.reported_run END,
         reported_seq = CASE WHEN $6::bool THEN $7::int ELSE jobs.reported_seq END,
         progress_step = CASE WHEN $8::int IS NULL THEN jobs.progress_step ELSE GREATEST(coalesce(jobs.progress_step, 0), $8) END,
         progress_at = CASE WHEN $8::int > coalesce(jobs.progress_step, -1) THEN now() ELSE jobs.progress_at END,
         pace_step = coalesce(jobs.pace_step, $8), pace_at = CASE WHEN $8::int IS NULL THEN jobs.pace_at ELSE coalesce(jobs.pace_at, now()) END
         FROM parts p WHERE jobs.id = p.id AND (p.s > 0 OR $6::bool)
     ), q AS (
       UPDATE quotas SET
         period_device_seconds = CASE WHEN period_start < usage_period_start() THEN p.s ELSE period_device_seconds + p.s END,
         period_running_seconds = CASE WHEN period_start < usage_period_start() THEN p.run ELSE period_running_seconds + p.run END,
         period_switching_seconds = CASE WHEN period_start < usage_period_start() THEN p.sw ELSE period_switching_seconds + p.sw END,
         period_idle_seconds = CASE WHEN period_start < usage_period_start() THEN p.idle ELSE period_idle_seconds + p.idle END,
         period_start = usage_period_start()
         FROM parts p WHERE quotas.tenant_id = p.tenant_id AND p.s > 0
     )
     INSERT INTO usage_ledger (tenant_id, job_id, device_seconds, running_seconds, switching_seconds, idle_seconds, period_start)
     SELECT tenant_id, id, s, run, sw, idle, usage_period_start() FROM parts WHERE s > 0
     RETURNING device_seconds`,
    [
      jobId,
      asked,
      parts.running,
      parts.switching,
      parts.idle,
      mark !== undefined,
      mark?.reportSeq ?? null,
      mark?.step ?? null,
      mark?.lateRun ?? null,
    ],
  );
  return Number(r.rows[0]?.device_seconds ?? 0);
}

/**
 * The record is written after the file is durable (the worker renamed it into place), so a record
 * always points at a complete file. A resumed run that saves the same step again replaces it. The
 * key is the control plane's own (job and step), never one the node chose. Like a job report
 * (job-report.ts) it is numbered in its run and applied at most once: the statement moves the run's
 * newest applied number (`reported_seq`) up to this record's, and writes nothing when it is already
 * there (a resend whose answer was lost); that resend is answered with the record it made.
 */
export async function recordCheckpoint(
  pool: pg.Pool,
  jobId: string,
  nodeId: string,
  c: CheckpointReport,
  /**
   * Whether the checkpoint's file is in storage, asked only of a record of the run before the job's
   * current one (a late record, below); absent, such a record is not taken.
   */
  durable?: (storageKey: string) => Promise<boolean>,
) {
  const r = await pool.query(
    `WITH run AS (
       UPDATE jobs SET reported_run = queue_seq, reported_seq = $9
        WHERE id = $1 AND node_id = $2 AND queue_seq = $8 AND status IN ('placed', 'running')
          AND (reported_run IS DISTINCT FROM queue_seq OR reported_seq < $9)
       RETURNING id, (spec -> 'workflow' ->> 'keepCheckpoints')::int AS keep
     ), c AS (
       INSERT INTO checkpoints (job_id, step, size_bytes, sha256, storage_key, meta)
       SELECT $1, $3, $4, $5, $6, $7::jsonb FROM run
       ON CONFLICT (job_id, step) DO UPDATE SET size_bytes = EXCLUDED.size_bytes, sha256 = EXCLUDED.sha256,
         storage_key = EXCLUDED.storage_key, meta = EXCLUDED.meta, created_at = now()
       RETURNING id, step
     ), e AS (
       INSERT INTO job_events (job_id, type, data)
       SELECT $1, 'job.checkpoint', jsonb_build_object('checkpointId', id, 'step', step) FROM c
       RETURNING id
     )
     SELECT c.id, (SELECT array_agg(id) FROM e) AS event_ids, (SELECT keep FROM run) AS keep FROM c`,
    [
      jobId,
      nodeId,
      c.step,
      c.sizeBytes,
      c.sha256,
      checkpointModelKey(jobId, c.step),
      JSON.stringify(c.meta),
      c.queueSeq,
      c.reportSeq,
    ],
  );
  const row = r.rows[0];
  // `keepCheckpoints` of the job, for retiring older checkpoints (checkpoint-retention.ts); a resend
  // (below) brings none, the first delivery retired them.
  if (row) return recorded(row);
  const seen = await pool.query(
    `SELECT c.id FROM jobs j JOIN checkpoints c ON c.job_id = j.id AND c.step = $3
      WHERE j.id = $1 AND j.node_id = $2 AND j.queue_seq = $4 AND j.reported_run = j.queue_seq
        AND j.reported_seq >= $5`,
    [jobId, nodeId, c.step, c.queueSeq, c.reportSeq],
  );
  if (seen.rows[0]) return { id: seen.rows[0].id as string, eventIds: [], keepCheckpoints: null };
  return durable ? recordLateCheckpoint(pool, jobId, nodeId, c, durable) : null;
}

/**
 * The guard of a late report (`$run`: the run it names) of the run just before the job's current
 * one: that run was requeued `node_lost` from this node (the liveness sweep, or the node's daemon
 * registering again), and the job waits in the queue for its next run, not placed yet. Nothing has
 * run since, so what that run did still stands: a checkpoint it made durable, the metrics and
 * device-seconds it reported (job-report.ts), its success.
 * `queue_seq = $run + 1` says exactly one requeue happened since (each one bumps it), the event
 * that it was this node's run ending `node_lost`. Once the next run is placed its history diverges
 * from the late run's (it resumes from an older step and overwrites the steps after it), and late
 * reports are ignored again.
 */
export const LATE_RUN_GUARD = (job: string, node: string, run: string) =>
  `${job}.status = 'queued' AND ${job}.queue_seq = ${run}::int + 1
   AND EXISTS (SELECT 1 FROM job_events l
                WHERE l.job_id = ${job}.id AND l.type = 'job.queued' AND l.data->>'reason' = 'node_lost'
                  AND l.data->>'nodeId' = ${node}::text AND (l.data->>'queueSeq')::int = ${run}::int)`;

/**
 * A checkpoint record of a run the scheduler requeued `node_lost` that arrives before the job's
 * next run is placed (LATE_RUN_GUARD): a daemon whose control plane was away (a database outage
 * past the node timeout) stopped its job, and its outbox delivers the records of checkpoints made
 * durable before that once the API takes them. The file is there (the daemon records only after
 * the store made it durable; checked again, as nothing of this run is running any more), so the
 * job resumes from it rather than from the last one recorded before the outage. Numbered in its
 * run like any record (`reported_run` names the late run, so the next run's numbers start afresh);
 * its event says it was late. Before, such records were answered 200 and dropped: a QA run's job
 * redid 200 steps and lost 8 durable checkpoints.
 */
async function recordLateCheckpoint(
  pool: pg.Pool,
  jobId: string,
  nodeId: string,
  c: CheckpointReport,
  durable: (storageKey: string) => Promise<boolean>,
) {
  const key = checkpointModelKey(jobId, c.step);
  const eligible = await pool.query(
    `SELECT 1 FROM jobs WHERE id = $1 AND ${LATE_RUN_GUARD('jobs', '$2', '$3')}`,
    [jobId, nodeId, c.queueSeq],
  );
  if (!eligible.rows[0] || !(await durable(key))) return null;
  const r = await pool.query(
    `WITH run AS (
       UPDATE jobs SET reported_run = $8, reported_seq = $9
        WHERE id = $1 AND ${LATE_RUN_GUARD('jobs', '$2', '$8')}
          AND (reported_run IS DISTINCT FROM $8 OR reported_seq < $9)
       RETURNING id, (spec -> 'workflow' ->> 'keepCheckpoints')::int AS keep
     ), c AS (
       INSERT INTO checkpoints (job_id, step, size_bytes, sha256, storage_key, meta)
       SELECT $1, $3, $4, $5, $6, $7::jsonb FROM run
       ON CONFLICT (job_id, step) DO UPDATE SET size_bytes = EXCLUDED.size_bytes, sha256 = EXCLUDED.sha256,
         storage_key = EXCLUDED.storage_key, meta = EXCLUDED.meta, created_at = now()
       RETURNING id, step
     ), e AS (
       INSERT INTO job_events (job_id, type, data)
       SELECT $1, 'job.checkpoint', jsonb_build_object('checkpointId', id, 'step', step, 'late', true,
                                                      'queueSeq', $8::int, 'nodeId', $2::text) FROM c
       RETURNING id
     )
     SELECT c.id, (SELECT array_agg(id) FROM e) AS event_ids, (SELECT keep FROM run) AS keep FROM c`,
    [jobId, nodeId, c.step, c.sizeBytes, c.sha256, key, JSON.stringify(c.meta), c.queueSeq, c.reportSeq],
  );
  const row = r.rows[0];
  if (row) return recorded(row);
  // A resend of a late record already taken (its answer was lost).
  const seen = await pool.query(
    `SELECT c.id FROM jobs j JOIN checkpoints c ON c.job_id = j.id AND c.step = $3
      WHERE j.id = $1 AND ${LATE_RUN_GUARD('j', '$2', '$4')} AND j.reported_run = $4 AND j.reported_seq >= $5`,
    [jobId, nodeId, c.step, c.queueSeq, c.reportSeq],
  );
  return seen.rows[0] ? { id: seen.rows[0].id as string, eventIds: [], keepCheckpoints: null } : null;
}

export interface ResumePoint {
  checkpointId: string;
  step: number;
  storageKey: string;
}

/** Where a (re)started job continues: its newest checkpoint, else the spec's initial checkpoint. */
export async function resumePoint(
  pool: pg.Pool,
  jobId: string,
  initial: { jobId: string; checkpointId: string } | null,
) {
  const own = await pool.query(
    `SELECT id, step, storage_key FROM checkpoints WHERE job_id = $1 ORDER BY step DESC LIMIT 1`,
    [jobId],
  );
  const row = own.rows[0];
  if (row) return { checkpointId: row.id, step: row.step, storageKey: row.storage_key, fromOwnRun: true };
  if (!initial) return null;
  const other = await pool.query(`SELECT id, storage_key FROM checkpoints WHERE id = $1 AND job_id = $2`, [
    initial.checkpointId,
    initial.jobId,
  ]);
  const o = other.rows[0];
  return o ? { checkpointId: o.id, step: 0, storageKey: o.storage_key, fromOwnRun: false } : null;
}

/** What a checkpoint record's insert returned, as its callers take it. */
function recorded(row: Record<string, unknown>) {
  return {
    id: row.id as string,
    eventIds: ((row.event_ids as string[] | null) ?? []).map(String),
    keepCheckpoints: (row.keep as number | null) ?? null,
  };
}
