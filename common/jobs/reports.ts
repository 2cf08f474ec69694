/**
 * What a running job reports through its node: metrics, stage profiles, device usage, checkpoints.
 * Every write is guarded by the job still being on the reporting node in the reporting run: a
 * checkpoint record by its own statement, the rest by the job row `applyJobReport` (job-report.ts)
 * locks for the report's transaction.
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
 * Device-seconds: the ledger row, the job's total and the tenant's period counter, together, each
 * also split by state (running, switching, idle-held; common/node-protocol/device-time.ts). A node
 * cannot charge a tenant more than the job's placement could have used: what is recorded is bounded
 * by the wall time since the job was placed (or first started) × the devices it holds, less what
 * was already recorded since then (kept on the job's row and reset by each placement: summing the
 * ledger took 255 ms a report at a million rows, bench:report), and a bounded charge keeps the
 * states' proportions. The job row is locked (by the report's transaction) so that concurrent
 * reports share the bound. Returns the device-seconds recorded.
 */
export async function recordUsage(
  tx: InRun,
  jobId: string,
  deviceSeconds: number,
  split: DeviceTime = { running: deviceSeconds, switching: 0, idle: 0 },
): Promise<number> {
  if (!(deviceSeconds > 0)) return 0;
  const parts = scaleTo(split, deviceSeconds);
  const r = await tx.query(
    `WITH j AS (
       SELECT id, tenant_id, coalesce(placed_at, started_at) AS since, placement_device_seconds AS charged,
              coalesce(jsonb_array_length(placement->'devices'), devices) AS held
         FROM jobs WHERE id = $1
     ), b0 AS (
       SELECT j.id, j.tenant_id, GREATEST(0, LEAST($2::float8,
                extract(epoch FROM now() - j.since) * j.held - j.charged)) AS s
         FROM j WHERE j.since IS NOT NULL
     ), b AS (
       SELECT id, tenant_id, s, s / $2::float8 * $3::float8 AS run, s / $2::float8 * $4::float8 AS sw,
              s / $2::float8 * $5::float8 AS idle
         FROM b0
     ), uj AS (
       UPDATE jobs SET device_seconds = jobs.device_seconds + b.s,
         placement_device_seconds = jobs.placement_device_seconds + b.s,
         running_device_seconds = jobs.running_device_seconds + b.run,
         switching_device_seconds = jobs.switching_device_seconds + b.sw,
         idle_device_seconds = jobs.idle_device_seconds + b.idle
         FROM b WHERE jobs.id = b.id AND b.s > 0
     ), q AS (
       UPDATE quotas SET
         period_device_seconds = CASE WHEN period_start < usage_period_start() THEN b.s ELSE period_device_seconds + b.s END,
         period_running_seconds = CASE WHEN period_start < usage_period_start() THEN b.run ELSE period_running_seconds + b.run END,
         period_switching_seconds = CASE WHEN period_start < usage_period_start() THEN b.sw ELSE period_switching_seconds + b.sw END,
         period_idle_seconds = CASE WHEN period_start < usage_period_start() THEN b.idle ELSE period_idle_seconds + b.idle END,
         period_start = usage_period_start()
         FROM b WHERE quotas.tenant_id = b.tenant_id AND b.s > 0
     )
     INSERT INTO usage_ledger (tenant_id, job_id, device_seconds, running_seconds, switching_seconds, idle_seconds, period_start)
     SELECT tenant_id, id, s, run, sw, idle, usage_period_start() FROM b WHERE s > 0
     RETURNING device_seconds`,
    [jobId, deviceSeconds, parts.running, parts.switching, parts.idle],
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
export async function recordCheckpoint(pool: pg.Pool, jobId: string, nodeId: string, c: CheckpointReport) {
  const r = await pool.query(
    `WITH run AS (
       UPDATE jobs SET reported_run = queue_seq, reported_seq = $9
        WHERE id = $1 AND node_id = $2 AND queue_seq = $8 AND status IN ('placed', 'running')
          AND (reported_run IS DISTINCT FROM queue_seq OR reported_seq < $9)
       RETURNING id
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
     SELECT c.id, (SELECT array_agg(id) FROM e) AS event_ids FROM c`,
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
  if (row) return { id: row.id as string, eventIds: ((row.event_ids as string[] | null) ?? []).map(String) };
  const seen = await pool.query(
    `SELECT c.id FROM jobs j JOIN checkpoints c ON c.job_id = j.id AND c.step = $3
      WHERE j.id = $1 AND j.node_id = $2 AND j.queue_seq = $4 AND j.reported_run = j.queue_seq
        AND j.reported_seq >= $5`,
    [jobId, nodeId, c.step, c.queueSeq, c.reportSeq],
  );
  return seen.rows[0] ? { id: seen.rows[0].id as string, eventIds: [] } : null;
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
