/** Tenant routes for jobs: submit (idempotent), list, get, cancel. */
import { Router, type Request } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from '../../common/zod.js';
import { ApiError, notFound } from '../../common/errors.js';
import { jobSpecSchema } from '../../common/job-spec.js';
import { requireRole, tenantOf } from '../auth/middleware.js';
import { json, registerRoute } from '../http/openapi.js';
import { jobListSchema, jobSchema, listJobsQuery, uuidParam } from '../http/schemas.js';
import { parseOrThrow } from '../http/validate.js';
import { admitJob } from '../jobs/admit.js';
import { AdmissionBatcher } from '../jobs/admission-batcher.js';
import { cancelJob } from '../jobs/cancel.js';
import { notifyEvents, sendControl } from '../../common/jobs/notify.js';
import { jobFromRow, serializeJob, type JobRecord } from '../jobs/serialize.js';
import type { ApiDeps } from '../deps.js';

const idempotencyKeySchema = z.string().min(1).max(255);
const idParams = z.object({ id: z.uuid() });

function decodeCursor(after: string): { createdAt: Date; id: string } {
  const raw = Buffer.from(after, 'base64url').toString('utf8');
  const [ts, id] = raw.split('|');
  const createdAt = new Date(ts ?? '');
  if (!id || Number.isNaN(createdAt.getTime()) || !uuidParam.safeParse(id).success) {
    throw new ApiError('invalid_request', 'after: not a cursor returned by this API', 'after');
  }
  return { createdAt, id };
}

const encodeCursor = (createdAt: Date, id: string) =>
  Buffer.from(`${createdAt.toISOString()}|${id}`).toString('base64url');

export function jobRoutes(deps: ApiDeps, registry: OpenAPIRegistry): Router {
  const r = Router();
  const tenantOnly = requireRole('tenant');
  const { pool } = deps.db;
  /** What follows the commit of new jobs: count them and enqueue them (nothing here may throw). */
  async function afterCommit(jobs: JobRecord[]): Promise<void> {
    if (!jobs.length) return;
    if (deps.config.TIMESHARE_FAULT === 'crash_after_commit') process.kill(process.pid, 'SIGKILL');
    deps.metrics.jobsSubmitted.inc(jobs.length);
    // No event notification here: nobody can be watching a job whose id this response carries.
    try {
      await deps.queue.enqueueMany(
        jobs.map((j) => ({ jobId: j.id, tenantId: j.tenantId, queueSeq: j.queueSeq })),
      );
    } catch (err) {
      // Committed but not enqueued: the jobs are accepted; reconciliation enqueues them.
      deps.logger.warn({ err, jobIds: jobs.map((j) => j.id) }, 'enqueue failed; left to reconciliation');
    }
  }
  const batcher = new AdmissionBatcher(pool, { maxBatch: 64, maxInFlight: 2, afterCommit });

  /** A job of the calling tenant, or 404 (another tenant's job does not exist for this caller). */
  async function ownJob(req: Request) {
    const id = req.params.id as string;
    if (!uuidParam.safeParse(id).success) throw notFound('job');
    const q = await pool.query('SELECT * FROM jobs WHERE id = $1 AND tenant_id = $2', [id, tenantOf(req)]);
    if (!q.rows[0]) throw notFound('job');
    return jobFromRow(q.rows[0]);
  }

  registerRoute(registry, {
    method: 'post',
    path: '/v1/jobs',
    summary: 'Submit a job',
    description:
      'Validated against the job spec; admitted atomically against the tenant quotas (429 `quota_exceeded` ' +
      'names the quota). With an `Idempotency-Key` header, the same key and body return the same job; the ' +
      'same key with another body is 409.',
    tags: ['jobs'],
    request: {
      headers: z.object({ 'Idempotency-Key': idempotencyKeySchema.optional() }),
      body: { content: { 'application/json': { schema: jobSpecSchema } } },
    },
    responses: {
      201: json(jobSchema, 'Created (or replayed for a known Idempotency-Key)'),
      409: json(jobSchema, 'Idempotency-Key reused with another body'),
      429: json(jobSchema, 'Quota exceeded'),
    },
  });
  r.post('/v1/jobs', tenantOnly, async (req, res) => {
    const tenantId = tenantOf(req);
    const spec = parseOrThrow(jobSpecSchema, req.body);
    const rawKey = req.get('idempotency-key');
    const idempotencyKey =
      rawKey === undefined ? null : parseOrThrow(idempotencyKeySchema, rawKey, 'Idempotency-Key');
    if (spec.initialCheckpoint) {
      const ck = await pool.query(
        `SELECT 1 FROM checkpoints c JOIN jobs j ON j.id = c.job_id
          WHERE c.id = $1 AND c.job_id = $2 AND j.tenant_id = $3`,
        [spec.initialCheckpoint.checkpointId, spec.initialCheckpoint.jobId, tenantId],
      );
      if (!ck.rows[0]) {
        throw new ApiError(
          'invalid_request',
          'no such checkpoint among your jobs',
          'initialCheckpoint.checkpointId',
        );
      }
    }
    if (!idempotencyKey) {
      // Enqueued by the batcher (afterCommit) before it answers.
      const { job } = await batcher.admit(tenantId, spec);
      res.status(201).json(serializeJob(job));
      return;
    }
    const admitted = await admitJob(pool, { tenantId, spec, idempotencyKey });
    const { job } = admitted;
    if (admitted.created) await afterCommit([job]);
    else res.setHeader('Idempotent-Replayed', 'true');
    res.status(201).json(serializeJob(job));
  });

  registerRoute(registry, {
    method: 'get',
    path: '/v1/jobs',
    summary: 'List your jobs, newest first',
    tags: ['jobs'],
    request: { query: listJobsQuery },
    responses: { 200: json(jobListSchema) },
  });
  r.get('/v1/jobs', tenantOnly, async (req, res) => {
    const q = parseOrThrow(listJobsQuery, req.query);
    const params: unknown[] = [tenantOf(req)];
    const where = ['tenant_id = $1'];
    if (q.status) where.push(`status = $${params.push(q.status)}`);
    if (q.name) where.push(`name = $${params.push(q.name)}`);
    if (q.after) {
      const c = decodeCursor(q.after);
      where.push(`(created_at, id) < ($${params.push(c.createdAt)}, $${params.push(c.id)})`);
    }
    const rows = await pool.query(
      `SELECT * FROM jobs WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT $${params.push(q.limit + 1)}`,
      params,
    );
    const jobs = rows.rows.slice(0, q.limit).map(jobFromRow);
    const last = jobs[jobs.length - 1];
    const nextCursor = rows.rows.length > q.limit && last ? encodeCursor(last.createdAt, last.id) : null;
    res.json({ data: jobs.map((j) => serializeJob(j)), nextCursor });
  });

  registerRoute(registry, {
    method: 'get',
    path: '/v1/jobs/{id}',
    summary: 'Get a job, with its queue position while queued',
    tags: ['jobs'],
    request: { params: idParams },
    responses: { 200: json(jobSchema) },
  });
  r.get('/v1/jobs/:id', tenantOnly, async (req, res) => {
    const job = await ownJob(req);
    let queuePosition: number | null = null;
    if (job.status === 'queued') {
      // Until the scheduler publishes its own order: jobs of the pool ahead by priority, then age.
      const ahead = await pool.query(
        `SELECT count(*)::int AS n FROM jobs WHERE status = 'queued' AND pool = $1
           AND (priority > $2 OR (priority = $2 AND (created_at, id) < ($3, $4)))`,
        [job.pool, job.priority, job.createdAt, job.id],
      );
      queuePosition = ahead.rows[0].n + 1;
    }
    res.json(serializeJob(job, { queuePosition }));
  });

  registerRoute(registry, {
    method: 'post',
    path: '/v1/jobs/{id}/cancel',
    summary: 'Cancel a job (idempotent; valid in every non-final state)',
    tags: ['jobs'],
    request: { params: idParams },
    responses: { 200: json(jobSchema), 409: json(jobSchema, 'The job already finished') },
  });
  r.post('/v1/jobs/:id/cancel', tenantOnly, async (req, res) => {
    const id = req.params.id as string;
    if (!uuidParam.safeParse(id).success) throw notFound('job');
    const result = await cancelJob(pool, tenantOf(req), id);
    if (result.eventId) {
      const { job } = result;
      await Promise.all([
        deps.queue.remove(job.id, job.queueSeq),
        notifyEvents(deps.redis, deps.names, job.id, [result.eventId]),
        sendControl(deps.redis, deps.names, { jobId: job.id, action: 'cancel' }),
      ]).catch((err) => req.log.warn({ err, jobId: job.id }, 'cancel fan-out failed; row is cancelled'));
    }
    res.json(serializeJob(result.job));
  });

  return r;
}
