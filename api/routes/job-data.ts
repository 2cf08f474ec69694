/** What a job produces: its event log (page or live SSE), metrics, and checkpoints (streamed). */
import { Router, type Request, type Response } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from '../../common/zod.js';
import { ApiError, notFound } from '../../common/errors.js';
import { isFinal, type JobStatus } from '../../common/job-status.js';
import { requireRole, tenantOf } from '../auth/middleware.js';
import { json, registerRoute } from '../http/openapi.js';
import {
  checkpointSchema,
  eventListSchema,
  eventsQuery,
  metricListSchema,
  metricsQuery,
  uuidParam,
  queryInt,
} from '../http/schemas.js';
import { parseOrThrow } from '../http/validate.js';
import { listEvents, type EventRow } from '../jobs/events.js';
import { listMetrics } from '../jobs/list-metrics.js';
import { requireOwnJob } from '../jobs/own-job.js';
import type { ApiDeps } from '../deps.js';

const SSE_HEARTBEAT_MS = 15_000;
const SSE_POLL_MS = 5_000;

export function jobDataRoutes(deps: ApiDeps, registry: OpenAPIRegistry): Router {
  const r = Router();
  const tenantOnly = requireRole('tenant');
  const { pool } = deps.db;

  const ownJob = (req: Request) => requireOwnJob(pool, tenantOf(req), req.params.id);

  registerRoute(registry, {
    method: 'get',
    path: '/v1/jobs/{id}/events',
    operationId: 'listJobEvents',
    summary: "A job's events: a JSON page, or with `Accept: text/event-stream` a live SSE stream",
    description:
      'The stream resumes after the `Last-Event-ID` header (or `after`), sends a comment every 15 s, ' +
      'and ends after the event that puts the job in a final state.',
    tags: ['jobs'],
    request: { params: z.object({ id: z.uuid() }), query: eventsQuery },
    responses: {
      200: {
        description: 'Events',
        content: {
          'application/json': { schema: eventListSchema },
          'text/event-stream': { schema: z.string() },
        },
      },
    },
  });
  r.get('/v1/jobs/:id/events', tenantOnly, async (req, res) => {
    const q = parseOrThrow(eventsQuery, req.query);
    const job = await ownJob(req);
    if (req.accepts(['application/json', 'text/event-stream']) === 'text/event-stream') {
      const lastId = req.get('last-event-id');
      const from =
        lastId !== undefined
          ? parseOrThrow(queryInt(0, Number.MAX_SAFE_INTEGER), lastId, 'Last-Event-ID')
          : (q.after ?? 0);
      return streamEvents(req, res, job.id, from, isFinal(job.status));
    }
    const events = await listEvents(pool, job.id, q.after ?? 0, q.limit);
    const last = events[events.length - 1];
    res.json({ data: events, nextCursor: events.length === q.limit && last ? last.id : null });
  });

  /**
   * `endsWhenDrained`: the job was already final when the stream opened, so no event can follow
   * its backlog. A client resuming after the final event (an SSE client reconnects whenever a
   * stream ends) would otherwise wait on a stream that never ends, polled every 5 s for good.
   */
  async function streamEvents(
    req: Request,
    res: Response,
    jobId: string,
    fromId: number,
    endsWhenDrained: boolean,
  ) {
    res.status(200).set({
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    let cursor = BigInt(fromId);
    let closed = false;
    let draining: Promise<void> | null = null;
    let again = false;

    const write = (e: EventRow) => {
      res.write(`id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
    };
    const finish = () => {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      clearInterval(poll);
      unsubscribe();
      res.end();
    };
    // Serialised: a notification that arrives mid-drain triggers one more pass, never a parallel one.
    const drain = () => {
      if (draining) {
        again = true;
        return;
      }
      draining = (async () => {
        do {
          again = false;
          const events = await listEvents(pool, jobId, cursor, 500);
          for (const e of events) {
            if (closed) return;
            write(e);
            cursor = BigInt(e.id);
            const status = e.data.status as JobStatus | undefined;
            if (status && isFinal(status)) return finish();
          }
          if (events.length === 500) again = true;
        } while (again && !closed);
        if (endsWhenDrained) finish();
      })()
        .catch((err) => {
          req.log.warn({ err, jobId }, 'event stream failed');
          finish();
        })
        .finally(() => {
          draining = null;
        });
    };

    const unsubscribe = deps.events.on(jobId, drain);
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), SSE_HEARTBEAT_MS);
    const poll = setInterval(drain, SSE_POLL_MS);
    req.on('close', finish);
    drain();
  }

  registerRoute(registry, {
    method: 'get',
    path: '/v1/jobs/{id}/metrics',
    operationId: 'listJobMetrics',
    description:
      'Points ordered by step then name, filtered by `name` and the step range; pages of `limit`, the next one `after` the `nextCursor`.',
    summary: "A job's metrics per step (reward, KL, loss, tokens/s, weight lag, accuracy…)",
    tags: ['jobs'],
    request: { params: z.object({ id: z.uuid() }), query: metricsQuery },
    responses: { 200: json(metricListSchema) },
  });
  r.get('/v1/jobs/:id/metrics', tenantOnly, async (req, res) => {
    const q = parseOrThrow(metricsQuery, req.query);
    if (q.from_step !== undefined && q.to_step !== undefined && q.from_step > q.to_step) {
      throw new ApiError('invalid_request', 'from_step must not exceed to_step', 'from_step');
    }
    const job = await ownJob(req);
    res.json(
      await listMetrics(pool, job.id, {
        name: q.name,
        fromStep: q.from_step,
        toStep: q.to_step,
        limit: q.limit,
        after: q.after,
      }),
    );
  });

  registerRoute(registry, {
    method: 'get',
    path: '/v1/jobs/{id}/checkpoints',
    operationId: 'listJobCheckpoints',
    description: 'Committed checkpoints by step, each with its size and sha256.',
    summary: "A job's committed checkpoints",
    tags: ['jobs'],
    request: { params: z.object({ id: z.uuid() }) },
    responses: { 200: json(z.object({ data: z.array(checkpointSchema) })) },
  });
  r.get('/v1/jobs/:id/checkpoints', tenantOnly, async (req, res) => {
    const job = await ownJob(req);
    const rows = await deps.db.prisma.checkpoint.findMany({
      where: { jobId: job.id },
      orderBy: { step: 'asc' },
    });
    res.json({
      data: rows.map((c) => ({
        id: c.id,
        jobId: c.jobId,
        step: c.step,
        sizeBytes: Number(c.sizeBytes),
        sha256: c.sha256,
        meta: c.meta as Record<string, unknown>,
        createdAt: c.createdAt.toISOString(),
      })),
    });
  });

  registerRoute(registry, {
    method: 'get',
    path: '/v1/jobs/{id}/checkpoints/{checkpointId}/content',
    operationId: 'getCheckpointContent',
    description:
      'One `Range: bytes=` range gets 206 (416 outside the file); an `If-Range` other than the ETag gets the whole file.',
    summary: 'Download a checkpoint (safetensors); supports Range; sha256 in `X-Checkpoint-Sha256`',
    tags: ['jobs'],
    request: {
      params: z.object({ id: z.uuid(), checkpointId: z.uuid() }),
      headers: z.object({
        Range: z.string().optional().openapi({ description: 'One `bytes=a-b`, `a-` or `-n` range' }),
        'If-Range': z
          .string()
          .optional()
          .openapi({ description: 'The ETag the client holds: a range of a changed file is the whole file' }),
      }),
    },
    errors: ['range_not_satisfiable'],
    responses: {
      200: { description: 'The file', content: { 'application/octet-stream': { schema: z.string() } } },
      206: {
        description: 'A range of the file',
        content: { 'application/octet-stream': { schema: z.string() } },
      },
    },
  });
  r.get('/v1/jobs/:id/checkpoints/:checkpointId/content', tenantOnly, async (req, res) => {
    const job = await ownJob(req);
    const checkpointId = req.params.checkpointId as string;
    if (!uuidParam.safeParse(checkpointId).success) throw notFound('checkpoint');
    const ck = await deps.db.prisma.checkpoint.findFirst({ where: { id: checkpointId, jobId: job.id } });
    if (!ck) throw notFound('checkpoint');
    const size = await deps.storage.size(ck.storageKey);
    if (size === null) throw new ApiError('not_found', 'checkpoint file is missing from storage');
    const etag = `"${ck.sha256}"`;
    // RFC 9110 §13.1.5: a range applies only to the representation the client names (strong match;
    // a date never matches, we send no Last-Modified); anything else gets the whole file.
    const ifRange = req.get('if-range');
    const range = parseRange(ifRange === undefined || ifRange === etag ? req.get('range') : undefined, size);
    if (range === 'unsatisfiable') {
      res.set('Content-Range', `bytes */${size}`);
      throw new ApiError('range_not_satisfiable', `range outside 0-${size - 1}`, 'Range');
    }
    res.set({
      'Content-Type': 'application/octet-stream',
      'Accept-Ranges': 'bytes',
      'X-Checkpoint-Sha256': ck.sha256,
      'Content-Disposition': `attachment; filename="checkpoint-step${ck.step}.safetensors"`,
      ETag: etag,
    });
    if (range) {
      res.status(206).set({
        'Content-Range': `bytes ${range.start}-${range.end}/${size}`,
        'Content-Length': String(range.end - range.start + 1),
      });
    } else {
      // The full file's digest, in the standard header too (RFC 9530).
      res.status(200).set({
        'Content-Length': String(size),
        'Repr-Digest': `sha-256=:${Buffer.from(ck.sha256, 'hex').toString('base64')}:`,
      });
    }
    const stream = await deps.storage.read(ck.storageKey, range ?? undefined);
    stream.on('error', (err) => {
      req.log.error({ err }, 'checkpoint read failed');
      res.destroy(err);
    });
    stream.pipe(res);
  });

  return r;
}

/** One `bytes=` range (the form download tools send); multi-range requests get the whole file. */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | null | 'unsatisfiable' {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(size - suffix, 0);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}
