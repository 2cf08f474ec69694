/**
 * The node side of running jobs: a daemon reads its assignments and reports on the jobs it runs
 * (start, metrics/profiles/usage, checkpoints, outcome). Admins can preempt a job. Every report is
 * guarded by the job still being placed on the reporting node in the run the report names
 * (`queueSeq`; see common/jobs/transitions.ts), so a node that lost a job cannot touch it any more,
 * nor can a late report of an earlier run touch the run placed now; such a report answers
 * `{applied: false}`.
 */
import { assignmentsOf, runHoldingDevices } from '../../common/jobs/assignments.js';
import { Router, type Request } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from '../../common/zod.js';
import { ApiError, notFound } from '../../common/errors.js';
import { sendControl } from '../../common/jobs/notify.js';
import {
  appliedSchema,
  assignmentSchema,
  checkpointReportSchema,
  jobFinishSchema,
  jobReportSchema,
  jobStartSchema,
} from '../../common/node-protocol/index.js';
import { requireOwnNode, requireRole } from '../auth/middleware.js';
import { json, registerRoute } from '../http/openapi.js';
import { uuidParam } from '../http/schemas.js';
import { nodeMessage, nodeProtocolGuard, nodeProtocolHeaders } from '../http/node-protocol.js';
import type { ApiDeps } from '../deps.js';
import { applyRecord, type RecordToApply } from '../nodes/report-apply.js';
import { nodeReportBatchRoute } from './node-report-batch.js';

const params = z.object({ id: z.uuid(), jobId: z.uuid() });

const startBody = jobStartSchema;
const reportBody = jobReportSchema;
const checkpointBody = checkpointReportSchema;
const finishBody = jobFinishSchema;
const applied = appliedSchema;

/** Whether `keyId` is the node key that registered node `nodeId` (false for a malformed id). */
export function nodeOwnedBy(pool: import('pg').Pool) {
  return async (nodeId: string, keyId: string) => {
    if (!uuidParam.safeParse(nodeId).success) return false;
    const r = await pool.query('SELECT 1 FROM nodes WHERE id = $1 AND key_id = $2', [nodeId, keyId]);
    return r.rows.length > 0;
  };
}

/**
 * The guard of every route a daemon calls for its own node: node credentials, and only the key that
 * registered the node. Past it, `req.params.id` is a well-formed id of the caller's node.
 */
export const ownNodeGuard = (pool: import('pg').Pool) => [
  requireRole('node'),
  requireOwnNode(nodeOwnedBy(pool)),
  nodeProtocolGuard,
];

export function nodeJobRoutes(deps: ApiDeps, registry: OpenAPIRegistry): Router {
  const r = Router();
  const { pool } = deps.db;
  const ownNode = ownNodeGuard(pool);

  const ids = (req: Request) => {
    const p = params.safeParse(req.params);
    if (!p.success) throw notFound('job');
    return { nodeId: p.data.id, jobId: p.data.jobId };
  };

  // One record, in transactions of its own; answered once what its commit announces is out.
  const applyAlone = async (nodeId: string, record: RecordToApply) => {
    const done = await applyRecord(deps, pool, nodeId, record);
    await done.announce();
    return done.applied;
  };

  registerRoute(registry, {
    method: 'get',
    path: '/v1/nodes/{id}/assignments',
    operationId: 'listNodeAssignments',
    description: 'The jobs placed on the calling node, each with the checkpoint it resumes from.',
    summary: 'Jobs placed on this node, with where each resumes from',
    tags: ['nodes'],
    request: { params: z.object({ id: z.uuid() }), headers: nodeProtocolHeaders },
    errors: ['node_protocol_unsupported'],
    responses: { 200: json(z.object({ data: z.array(assignmentSchema) })) },
  });
  r.get('/v1/nodes/:id/assignments', ...ownNode, async (req, res) => {
    res.json({ data: await assignmentsOf(pool, req.params.id as string) });
  });

  registerRoute(registry, {
    method: 'post',
    path: '/v1/nodes/{id}/jobs/{jobId}/start',
    operationId: 'startNodeJob',
    description:
      'placed to running; applied only while the job is placed on this node in the run `queueSeq` names.',
    summary: 'The node started the job (placed → running; counts an attempt)',
    tags: ['nodes'],
    request: {
      params,
      headers: nodeProtocolHeaders,
      body: { content: { 'application/json': { schema: startBody } } },
    },
    errors: ['node_protocol_unsupported'],
    responses: { 200: json(applied) },
  });
  r.post('/v1/nodes/:id/jobs/:jobId/start', ...ownNode, async (req, res) => {
    const { nodeId, jobId } = ids(req);
    const body = nodeMessage(req, 'start', startBody);
    res.json({ applied: await applyAlone(nodeId, { kind: 'start', jobId, body }) });
  });

  registerRoute(registry, {
    method: 'post',
    path: '/v1/nodes/{id}/jobs/{jobId}/report',
    operationId: 'reportNodeJob',
    description:
      'Metrics (one row per job, name and step), stage profiles, device-seconds and job events of decisions the node took inside the placement ' +
      '(`job.rebalanced`, which also records the new stage map in the placement, and `job.rebalance_measured`); applied only while the job is placed on this node in the run `queueSeq` names, ' +
      'or, late, while the job waits in the queue after that run was requeued `node_lost` from this node and before its next run is placed ' +
      '(then its metrics, profiles and device-seconds are recorded, its job events are not).',
    summary: 'Metrics per step, stage profiles and device-seconds of a running job',
    tags: ['nodes'],
    request: {
      params,
      headers: nodeProtocolHeaders,
      body: { content: { 'application/json': { schema: reportBody } } },
    },
    errors: ['node_protocol_unsupported'],
    responses: { 200: json(applied) },
  });
  r.post('/v1/nodes/:id/jobs/:jobId/report', ...ownNode, async (req, res) => {
    const { nodeId, jobId } = ids(req);
    const body = nodeMessage(req, 'report', reportBody);
    res.json({ applied: await applyAlone(nodeId, { kind: 'report', jobId, body }) });
  });

  registerRoute(registry, {
    method: 'post',
    path: '/v1/nodes/{id}/jobs/{jobId}/checkpoints',
    operationId: 'recordNodeJobCheckpoint',
    description:
      'A checkpoint whose file is durable; applied only while the job is placed on this node in the run `queueSeq` names, ' +
      'or, late, while the job waits in the queue after that run was requeued `node_lost` from this node and before its ' +
      'next run is placed (the file must be in storage; event `job.checkpoint` with `late: true`).',
    summary: 'A checkpoint file is durable in storage: record it',
    tags: ['nodes'],
    request: {
      params,
      headers: nodeProtocolHeaders,
      body: { content: { 'application/json': { schema: checkpointBody } } },
    },
    errors: ['node_protocol_unsupported'],
    responses: { 200: json(applied.extend({ checkpointId: z.uuid().nullable() })) },
  });
  r.post('/v1/nodes/:id/jobs/:jobId/checkpoints', ...ownNode, async (req, res) => {
    const { nodeId, jobId } = ids(req);
    const body = nodeMessage(req, 'checkpoint', checkpointBody);
    const done = await applyRecord(deps, pool, nodeId, { kind: 'checkpoint', jobId, body });
    await done.announce();
    res.json({ applied: done.applied, checkpointId: done.checkpointId ?? null });
  });

  registerRoute(registry, {
    method: 'post',
    path: '/v1/nodes/{id}/jobs/{jobId}/finish',
    operationId: 'finishNodeJob',
    summary:
      "The job's run on this node ended: succeeded, failed, preempted, crashed, drained or lost_contact",
    description:
      '`preempted`, `drained` and `lost_contact` (the daemon lost the control plane and its job process ' +
      'stopped itself) return the job to the queue, using none of its attempts (it resumes from its last ' +
      'checkpoint); `crashed` does too until the attempts run out, then the job fails with the cause. ' +
      'Applied only while the job is placed on this node in the run `queueSeq` names, but for one case: ' +
      '`lost_contact`, `succeeded`, `preempted` or `drained` for a run that started and that the scheduler ' +
      'requeued as `node_lost` from this node (the node was alive, and the run did not end by the job’s ' +
      'fault) gives the job back the attempt that requeue used (`job.attempt_refunded`, its outcome as ' +
      '`reason`); the run itself stays requeued. A late `succeeded` of such a run that arrives while the job ' +
      'still waits in the queue, its next run not placed yet, finishes the job instead (`job.succeeded` ' +
      'with `late: true`). A `succeeded` finish may say why the run ended where it did ' +
      '(`reason`, node protocol 3), shown in the `job.succeeded` event.',
    tags: ['nodes'],
    request: {
      params,
      headers: nodeProtocolHeaders,
      body: { content: { 'application/json': { schema: finishBody } } },
    },
    errors: ['node_protocol_unsupported'],
    responses: { 200: json(applied) },
  });
  r.post('/v1/nodes/:id/jobs/:jobId/finish', ...ownNode, async (req, res) => {
    const { nodeId, jobId } = ids(req);
    const body = nodeMessage(req, 'finish', finishBody);
    res.json({ applied: await applyAlone(nodeId, { kind: 'finish', jobId, body }) });
  });

  nodeReportBatchRoute(r, deps, registry, ownNode);

  registerRoute(registry, {
    method: 'post',
    path: '/v1/jobs/{id}/preempt',
    operationId: 'preemptJob',
    description:
      'Admin: a placed or running job is asked to checkpoint and requeue; a job in any other state is 409 `conflict`.',
    summary: 'Preempt a running job: it checkpoints, releases its devices and returns to the queue',
    tags: ['jobs'],
    request: { params: z.object({ id: z.uuid() }) },
    errors: ['conflict'],
    responses: { 202: json(z.object({ jobId: z.uuid() }), 'Requested') },
  });
  r.post('/v1/jobs/:id/preempt', requireRole('admin'), async (req, res) => {
    const id = req.params.id as string;
    if (!uuidParam.safeParse(id).success) throw notFound('job');
    const queueSeq = await runHoldingDevices(pool, id);
    if (queueSeq === null) {
      // Told apart from a job that does not exist: an admin retrying it would wait for nothing.
      const job = await pool.query(`SELECT status::text AS status FROM jobs WHERE id = $1`, [id]);
      const status = job.rows[0]?.status as string | undefined;
      if (status === undefined) throw notFound('job');
      throw new ApiError('conflict', `job is ${status}: only a placed or running job can be preempted`);
    }
    await sendControl(deps.redis, deps.names, { jobId: id, queueSeq, action: 'preempt' });
    res.status(202).json({ jobId: id });
  });

  return r;
}
