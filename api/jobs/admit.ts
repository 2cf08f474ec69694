/**
 * Job admission in SQL. `admit_jobs` (see its migrations) takes the quota row's lock, admits what
 * every quota allows and writes the job rows, their first events and the quota count in one
 * statement; concurrent submissions of a tenant queue on that row lock for the length of one
 * statement, so a limit of N admits exactly N however many arrive at once, and a refused
 * submission writes nothing. A submission with an Idempotency-Key also writes its key record in
 * that same statement (admitJob); the others are admitted in groups (admission-batcher.ts).
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { ApiError } from '../../common/errors.js';
import { priorityLevels } from '../../common/job-status.js';
import type { JobSpec } from '../../common/job-spec.js';
import { jobFromRow, type JobRecord } from './serialize.js';

// Usage from an earlier period is ignored; the period's rule lives in SQL (usage_period_start()).
const PERIOD_USED = `CASE WHEN period_start < usage_period_start() THEN 0 ELSE period_device_seconds END`;

// The admission itself is the `admit_jobs` SQL function (its migrations explain it), shared with
// group admission (admission-batcher.ts); a refusal comes back as a row of NULLs.
const ADMIT_SQL = `
WITH j AS (
  SELECT * FROM admit_jobs($1::jsonb)
), k AS (
  INSERT INTO idempotency_keys (tenant_id, key, request_hash, job_id)
  SELECT $4::uuid, $2, $3, id FROM j WHERE id IS NOT NULL
)
SELECT * FROM j`;

/** One element of `admit_jobs`' argument (a JSON array of these). */
export function admissionElement(tenantId: string, spec: JobSpec) {
  return {
    tenant_id: tenantId,
    name: spec.name,
    priority: priorityLevels[spec.priority],
    pool: spec.pool,
    devices: spec.resources.devices,
    max_attempts: spec.maxAttempts,
    spec,
  };
}

/**
 * The record of a job `admit_jobs` just created: it returns only the id and the commit time, the
 * rest is what was inserted plus the column defaults of a new row (queued, attempt 0, queue_seq 0).
 * A test compares it with the row as read back.
 */
export function admittedJob(tenantId: string, spec: JobSpec, id: string, createdAt: Date): JobRecord {
  return {
    id,
    tenantId,
    name: spec.name,
    status: 'queued',
    priority: priorityLevels[spec.priority],
    pool: spec.pool,
    devices: spec.resources.devices,
    spec,
    attempts: 0,
    interruptions: 0,
    maxAttempts: spec.maxAttempts,
    queueSeq: 0,
    // No round has judged it yet (the first one stores the reason it finds).
    waitReason: null,
    lastError: null,
    finishReason: null,
    deviceSeconds: 0,
    createdAt,
    updatedAt: createdAt,
    startedAt: null,
    finishedAt: null,
    pausedAt: null,
    progress: { step: null, at: null, paceStep: null, paceAt: null },
  };
}

/** A submission with an Idempotency-Key (those without one are admitted in groups). */
export interface AdmitRequest {
  tenantId: string;
  /** The spec stored: `requested`, or what a job from a checkpoint runs (submit.ts). */
  spec: JobSpec;
  /**
   * The spec as the request stated it (parsed): the key's request hash, so that a retry of the same
   * request is a replay and another request a conflict, however either would be stored.
   */
  requested: JobSpec;
  idempotencyKey: string;
}

export interface Admitted {
  job: JobRecord;
  /** false when an earlier request with the same idempotency key created the job. */
  created: boolean;
}

export const requestHash = (spec: JobSpec) => createHash('sha256').update(JSON.stringify(spec)).digest('hex');

/** Admits a keyed submission whose key the caller found unused (replayOf); a race for it replays. */
export async function admitJob(pool: pg.Pool, req: AdmitRequest): Promise<Admitted> {
  const hash = requestHash(req.requested);
  const devices = req.spec.resources.devices;
  let rows: Record<string, unknown>[];
  try {
    // Named: each pooled connection parses and plans this CTE once, not on every submission.
    const r = await pool.query({
      name: 'admit-job',
      text: ADMIT_SQL,
      values: [
        JSON.stringify([admissionElement(req.tenantId, req.spec)]),
        req.idempotencyKey,
        hash,
        req.tenantId,
      ],
    });
    rows = r.rows;
  } catch (err) {
    // A concurrent request with the same idempotency key won the insert: answer as it did.
    if ((err as { code?: string }).code === '23505') {
      const prior = await findIdempotent(pool, req.tenantId, req.idempotencyKey, hash);
      if (prior) return prior;
    }
    throw admissionError(err);
  }
  const row = rows[0];
  if (!row || row.id === null) throw await quotaError(pool, req.tenantId, devices);
  return {
    job: admittedJob(req.tenantId, req.spec, row.id as string, row.created_at as Date),
    created: true,
  };
}

/** SQLSTATE of the jobs trigger that refuses a job whose initial checkpoint is gone (migration 20261128120000). */
const CHECKPOINT_GONE = 'TSCK0';

/**
 * What an admission's failure means to the submitter: the checkpoint it names was deleted after the
 * API found it (retired by its job's keepCheckpoints meanwhile) is the same answer as never found.
 */
export function admissionError(err: unknown): unknown {
  return (err as { code?: string }).code === CHECKPOINT_GONE ? noSuchCheckpoint() : err;
}

export const noSuchCheckpoint = () =>
  new ApiError('invalid_request', 'no such checkpoint among your jobs', 'initialCheckpoint.checkpointId');

/**
 * The job an earlier request with this Idempotency-Key created, if the body is the same (409 if
 * not): a retry is answered before anything about the request is checked again, since what it
 * named may have changed since (a checkpoint deleted by retention).
 */
export const replayOf = (pool: pg.Pool, tenantId: string, key: string, requested: JobSpec) =>
  findIdempotent(pool, tenantId, key, requestHash(requested));

async function findIdempotent(
  pool: pg.Pool,
  tenantId: string,
  key: string,
  hash: string,
): Promise<Admitted | null> {
  const r = await pool.query(
    `SELECT k.request_hash, j.* FROM idempotency_keys k JOIN jobs j ON j.id = k.job_id
      WHERE k.tenant_id = $1 AND k.key = $2`,
    [tenantId, key],
  );
  const row = r.rows[0];
  if (!row) return null;
  if (row.request_hash !== hash) {
    throw new ApiError(
      'conflict',
      'Idempotency-Key was already used with a different request body',
      'Idempotency-Key',
    );
  }
  return { job: jobFromRow(row), created: false };
}

/** Explains a rejected admission: which quota, its limit, and what the tenant has now. */
export async function quotaError(pool: pg.Pool, tenantId: string, devices: number): Promise<ApiError> {
  const r = await pool.query(
    `SELECT max_active_jobs, max_devices_per_job, max_concurrent_devices, device_hours_per_month,
            active_jobs, ${PERIOD_USED} AS used FROM quotas WHERE tenant_id = $1`,
    [tenantId],
  );
  const q = r.rows[0];
  if (!q) return new ApiError('not_found', 'tenant not found');
  if (devices > q.max_devices_per_job) {
    return quotaExceeded(
      'maxDevicesPerJob',
      q.max_devices_per_job,
      `the job asks for ${devices} devices`,
      'resources.devices',
    );
  }
  if (devices > q.max_concurrent_devices) {
    return quotaExceeded(
      'maxConcurrentDevices',
      q.max_concurrent_devices,
      `the job asks for ${devices} devices`,
      'resources.devices',
    );
  }
  if (q.used >= q.device_hours_per_month * 3600) {
    const used = (q.used / 3600).toFixed(2);
    return quotaExceeded(
      'deviceHoursPerMonth',
      q.device_hours_per_month,
      `${used} device-hours used this month`,
    );
  }
  return quotaExceeded('maxActiveJobs', q.max_active_jobs, `${q.active_jobs} jobs are active`);
}

function quotaExceeded(quota: string, limit: number, detail: string, param: string | null = null): ApiError {
  return new ApiError('quota_exceeded', `quota ${quota} (limit ${limit}) exceeded: ${detail}`, param, {
    quota,
    limit,
  });
}
