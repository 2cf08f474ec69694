/** Tenant routes for jobs: submit (idempotent), list, get, change priority, cancel, pause and resume. */
import { readQueueViews } from '../jobs/queue-view.js';
import { Router, type Request } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from '../../common/zod.js';
import { notFound } from '../../common/errors.js';
import { jobSpecSchema } from '../../common/job-spec.js';
import { requireRole, tenantOf } from '../auth/middleware.js';
import { json, registerRoute } from '../http/openapi.js';
import { jobListSchema, jobSchema, listJobsQuery, uuidParam } from '../http/schemas.js';
import { parseOrThrow } from '../http/validate.js';
import { decodeTimeCursor, encodeCursor, page } from '../http/cursor.js';
import { idempotencyKeySchema, sendSubmitted, type SubmitJob } from '../jobs/submit.js';
import { cancelJob } from '../jobs/cancel.js';
import { pauseJob, resumeJob } from '../jobs/pause.js';
import type { JobChange } from '../jobs/job-change.js';
import { reprioritizeJob } from '../jobs/reprioritize.js';
import { priorityLevels, type PriorityName } from '../../common/job-status.js';
import { notifyEvents, sendControl } from '../../common/jobs/notify.js';
import { serializeJob } from '../jobs/serialize.js';
import { requireOwnJob } from '../jobs/own-job.js';
import { bestEffortNotice } from '../../common/jobs/best-effort.js';
import { listJobs } from '../jobs/list-jobs.js';
import type { ApiDeps } from '../deps.js';

const idParams = z.object({ id: z.uuid() });

export function jobRoutes(deps: ApiDeps, registry: OpenAPIRegistry, submit: SubmitJob): Router {
  const r = Router();
  const tenantOnly = requireRole('tenant');
  const { pool } = deps.db;
  /**
   * After a committed change to a job: wake the scheduler and the job's event streams (and `also`).
   * The row is the truth: if this fails, a round within the second finds the change anyway, so it
   * is skipped while Redis is not ready and never waited for beyond a short bound (common/jobs/best-effort.ts).
   */
  const announce = (
    req: Request,
    jobId: string,
    eventId: string,
    what: string,
    also: (() => Promise<unknown>)[] = [],
  ) =>
    bestEffortNotice(deps.redis, req.log, `${what} fan-out`, () =>
      Promise.all([
        deps.wake.wake(),
        notifyEvents(deps.redis, deps.names, jobId, [eventId]),
        ...also.map((send) => send()),
      ]),
    );

  /** A job of the calling tenant, or 404 (another tenant's job does not exist for this caller). */
  const ownJob = (req: Request) => requireOwnJob(pool, tenantOf(req), req.params.id);

  registerRoute(registry, {
    method: 'post',
    path: '/v1/jobs',
    operationId: 'submitJob',
    summary: 'Submit a job',
    description:
      'Validated against the job spec, the model context against the task included (400 `invalid_request` ' +
      'naming `workflow.model.contextLength`), and with an `initialCheckpoint`, a task or model size that ' +
      "differs from the checkpoint's (400 naming the field); admitted atomically against the tenant quotas " +
      '(429 `quota_exceeded` names the quota). With an `Idempotency-Key` header, the same key and body return the same job; the ' +
      'same key with another body is 409.',
    tags: ['jobs'],
    request: {
      headers: z.object({ 'Idempotency-Key': idempotencyKeySchema.optional() }),
      body: { content: { 'application/json': { schema: jobSpecSchema } } },
    },
    errors: ['conflict', 'quota_exceeded'],
    responses: {
      201: {
        ...json(jobSchema, 'Created (or replayed for a known Idempotency-Key)'),
        headers: {
          'Idempotent-Replayed': {
            description:
              '`true` when the answer is the job an earlier request with this `Idempotency-Key` created',
            schema: { type: 'string', enum: ['true'] },
          },
        },
      },
    },
  });
  // Requests in the usual form are answered by the fast path before Express sees them
  // (api/http/submit-fast-path.ts); this route answers the rest, through the same submitter.
  r.post('/v1/jobs', tenantOnly, async (req, res) => {
    sendSubmitted(res, await submit(tenantOf(req), req.body, req.get('idempotency-key')));
  });

  registerRoute(registry, {
    method: 'get',
    path: '/v1/jobs',
    operationId: 'listJobs',
    summary: 'List your jobs, newest first',
    description:
      'Filtered by `status` and `name`; pages of `limit` jobs, the next one `after` the `nextCursor`.',
    tags: ['jobs'],
    request: { query: listJobsQuery },
    responses: { 200: json(jobListSchema) },
  });
  r.get('/v1/jobs', tenantOnly, async (req, res) => {
    const q = parseOrThrow(listJobsQuery, req.query);
    const rows = await listJobs(pool, tenantOf(req), {
      status: q.status,
      name: q.name,
      after: q.after ? decodeTimeCursor(q.after) : null,
      limit: q.limit + 1,
    });
    const { data, nextCursor } = page(rows, q.limit, (j) => encodeCursor(j.createdAt.toISOString(), j.id));
    const views = await readQueueViews(
      deps.redis,
      deps.names,
      data.filter((j) => j.status === 'queued').map((j) => j.id),
      req.log,
    );
    res.json({ data: data.map((j) => serializeJob(j, { queue: views.get(j.id) })), nextCursor });
  });

  registerRoute(registry, {
    method: 'get',
    path: '/v1/jobs/{id}',
    operationId: 'getJob',
    summary:
      'Get a job; while queued, its position, estimated start and wait reason from the last scheduling round',
    description: "Another tenant's job is not found, as a job that does not exist.",
    tags: ['jobs'],
    request: { params: idParams },
    responses: { 200: json(jobSchema) },
  });
  r.get('/v1/jobs/:id', tenantOnly, async (req, res) => {
    const job = await ownJob(req);
    const views =
      job.status === 'queued' ? await readQueueViews(deps.redis, deps.names, [job.id], req.log) : null;
    res.json(serializeJob(job, { queue: views?.get(job.id) }));
  });

  const jobUpdateSchema = z
    .strictObject({
      priority: z
        .enum(Object.keys(priorityLevels) as [PriorityName, ...PriorityName[]])
        .openapi({ description: "The job's new priority among its tenant's jobs" }),
    })
    .openapi('JobUpdate');
  registerRoute(registry, {
    method: 'patch',
    path: '/v1/jobs/{id}',
    operationId: 'updateJob',
    summary: "Change a job's priority (idempotent; valid in every non-final state)",
    description:
      "Priority orders a tenant's own jobs, queued and running alike: the next scheduling round uses it, and a " +
      "higher-priority job may preempt the same tenant's lower ones (`priority` notices). It never moves a job " +
      "ahead of another tenant's: fair share decides that. Writes a `job.priority_changed` event (`from`, `to`); " +
      'the same priority again returns the job unchanged. A finished job is 409 `conflict`; a body with any ' +
      'other field is 400 `invalid_request`.',
    tags: ['jobs'],
    request: { params: idParams, body: { content: { 'application/json': { schema: jobUpdateSchema } } } },
    errors: ['conflict'],
    responses: { 200: json(jobSchema) },
  });
  r.patch('/v1/jobs/:id', tenantOnly, async (req, res) => {
    // A job that is not the caller's is 404 whatever the body says.
    const { id } = await ownJob(req);
    const { priority } = parseOrThrow(jobUpdateSchema, req.body ?? {});
    const { job, eventId } = await reprioritizeJob(pool, tenantOf(req), id, priority);
    if (eventId) await announce(req, job.id, eventId, 'priority');
    const views =
      job.status === 'queued' ? await readQueueViews(deps.redis, deps.names, [job.id], req.log) : null;
    res.json(serializeJob(job, { queue: views?.get(job.id) }));
  });

  registerRoute(registry, {
    method: 'post',
    path: '/v1/jobs/{id}/cancel',
    operationId: 'cancelJob',
    summary: 'Cancel a job (idempotent; valid in every non-final state)',
    description: 'Cancelling a cancelled job returns it again; a succeeded or failed job is 409 `conflict`.',
    tags: ['jobs'],
    request: { params: idParams },
    errors: ['conflict'],
    responses: { 200: json(jobSchema) },
  });
  r.post('/v1/jobs/:id/cancel', tenantOnly, async (req, res) => {
    const id = req.params.id as string;
    if (!uuidParam.safeParse(id).success) throw notFound('job');
    const result = await cancelJob(pool, tenantOf(req), id);
    if (result.eventId) {
      const { job } = result;
      await announce(req, job.id, result.eventId, 'cancel', [
        () =>
          sendControl(deps.redis, deps.names, { jobId: job.id, queueSeq: job.queueSeq, action: 'cancel' }),
      ]);
    }
    res.json(serializeJob(result.job));
  });

  /** Pause and resume change the row; the scheduler acts on it (api/jobs/pause.ts). */
  const pauseRoute = (
    action: 'pause' | 'resume',
    apply: (pool: typeof deps.db.pool, tenantId: string, jobId: string) => Promise<JobChange>,
    doc: { summary: string; description: string },
  ) => {
    registerRoute(registry, {
      method: 'post',
      path: `/v1/jobs/{id}/${action}`,
      operationId: `${action}Job`,
      ...doc,
      tags: ['jobs'],
      request: { params: idParams },
      errors: ['conflict'],
      responses: { 200: json(jobSchema) },
    });
    r.post(`/v1/jobs/:id/${action}`, tenantOnly, async (req, res) => {
      const id = req.params.id as string;
      if (!uuidParam.safeParse(id).success) throw notFound('job');
      const { job, eventId } = await apply(pool, tenantOf(req), id);
      if (eventId) await announce(req, job.id, eventId, action);
      res.json(serializeJob(job));
    });
  };
  pauseRoute('pause', pauseJob, {
    summary:
      'Pause a job (idempotent): it is not placed, and a running one checkpoints and leaves its devices',
    description:
      'A queued job waits with `waitReason` `paused`; a placed or running one is given a preemption notice ' +
      '(reason `pause`) by the next scheduling round, checkpoints within the grace period and returns to the ' +
      'queue, paused. It stays active for the `maxActiveJobs` quota. Pausing a paused job returns it again; a ' +
      'finished job is 409 `conflict`.',
  });
  pauseRoute('resume', resumeJob, {
    summary: 'Resume a paused job (idempotent): the next scheduling round orders it again',
    description:
      'It keeps its priority and resumes from its newest checkpoint. Resuming a job that is not paused returns ' +
      'it unchanged; a finished job is 409 `conflict`. A job resumed before its pause notice took effect still ' +
      'checkpoints and requeues once.',
  });

  return r;
}
