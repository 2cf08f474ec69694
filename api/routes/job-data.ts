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
  eventCursor,
  eventsQuery,
  eventStreamHeaders,
  eventStreamQuery,
  metricListSchema,
  metricsQuery,
  uuidParam,
} from '../http/schemas.js';
import { parseOrThrow } from '../http/validate.js';
import { listEvents, type EventRow } from '../jobs/events.js';
import { listMetrics } from '../jobs/list-metrics.js';
import { requireOwnJob } from '../jobs/own-job.js';
import type { ApiDeps } from '../deps.js';

const SSE_HEARTBEAT_MS = 15_000;
const SSE_POLL_MS = 5_000;
/** setTimeout's longest delay; tokens live at most a day (TIMESHARE_JWT_TTL_SECONDS). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Headers of every checkpoint download, whole or a range. */
const checkpointHeaders = {
  'X-Checkpoint-Sha256': { description: "The whole file's sha256, hex", schema: { type: 'string' as const } },
  ETag: { description: 'The sha256 as a strong ETag, for `If-Range`', schema: { type: 'string' as const } },
  'Accept-Ranges': { description: '`bytes`', schema: { type: 'string' as const } },
};

export function jobDataRoutes(deps: ApiDeps, registry: OpenAPIRegistry): Router {
  const r = Router();
  const tenantOnly = requireRole('tenant');
  const { pool } = deps.db;

  const ownJob = (req: Request) => requireOwnJob(pool, tenantOf(req), req.params.id);

  registerRoute(registry, {
    method: 'get',
    path: '/v1/jobs/{id}/events',
    operationId: 'listJobEvents',
    summary: "A page of a job's events, oldest first",
    description:
      'Pages of `limit` events, the next one `after` the `nextCursor` (event ids and cursors are decimal ' +
      'strings). The live stream is `GET /v1/jobs/{id}/events/stream`; this path sends the same stream ' +
      'when asked for `Accept: text/event-stream` (as the dashboard and the CLI ask for it).',
    tags: ['jobs'],
    request: { params: z.object({ id: z.uuid() }), query: eventsQuery },
    responses: {
      200: {
        description: 'Events: a JSON page, or with `Accept: text/event-stream` the live stream',
        content: {
          'application/json': { schema: eventListSchema },
          'text/event-stream': {
            schema: z.string().openapi({
              description:
                'SSE frames, as `GET /v1/jobs/{id}/events/stream` sends them (described there): `id`, `event` ' +
                'and `data` (a `JobEvent`) for every event after `Last-Event-ID` (or `after`), then live ones',
            }),
          },
        },
      },
    },
  });
  registerRoute(registry, {
    method: 'get',
    path: '/v1/jobs/{id}/events/stream',
    operationId: 'streamJobEvents',
    summary: "A job's events as a live SSE stream",
    description:
      'Server-sent events: `id: <event id>`, `event: <type>`, `data: <JobEvent JSON>` for every event after ' +
      '`Last-Event-ID` (or `after`), then live ones; a comment every 15 s. It ends once the job is final and ' +
      'every event up to its final one is passed (sent, or before the cursor), and when the token it was ' +
      'opened with expires (reconnect with a fresh token and `Last-Event-ID`: nothing is missed).',
    tags: ['jobs'],
    request: {
      params: z.object({ id: z.uuid() }),
      query: eventStreamQuery,
      headers: eventStreamHeaders,
    },
    responses: {
      200: {
        description: 'The event stream',
        content: {
          'text/event-stream': {
            schema: z.string().openapi({ description: 'SSE frames; each `data` is a `JobEvent`' }),
          },
        },
      },
    },
  });
  const openStream = async (req: Request, res: Response, after: string | undefined) => {
    const job = await ownJob(req);
    const lastId = req.get('last-event-id');
    const from = lastId !== undefined ? parseOrThrow(eventCursor(), lastId, 'Last-Event-ID') : (after ?? '0');
    return streamEvents(req, res, job.id, BigInt(from));
  };
  r.get('/v1/jobs/:id/events/stream', tenantOnly, async (req, res) => {
    const q = parseOrThrow(eventStreamQuery, req.query);
    return openStream(req, res, q.after);
  });
  r.get('/v1/jobs/:id/events', tenantOnly, async (req, res) => {
    const q = parseOrThrow(eventsQuery, req.query);
    if (req.accepts(['application/json', 'text/event-stream']) === 'text/event-stream')
      return openStream(req, res, q.after);
    const job = await ownJob(req);
    // One more than the page: a cursor only when there is more to read now (a full last page sent
    // clients for an empty one).
    const read = await listEvents(pool, job.id, BigInt(q.after ?? '0'), q.limit + 1);
    const events = read.slice(0, q.limit);
    const more = read.length > q.limit;
    res.json({ data: events, nextCursor: more ? events[events.length - 1]!.id : null });
  });

  const jobIsFinal = async (jobId: string) => {
    const r = await pool.query<{ status: JobStatus }>('SELECT status FROM jobs WHERE id = $1', [jobId]);
    // A job that is gone (its tenant deleted) has nothing more to send.
    return !r.rows[0] || isFinal(r.rows[0].status);
  };

  /**
   * Ends after it writes an event that puts the job in a final state, or once the job is final and
   * no event of it is left after the cursor: event ids are global, so a cursor may lie past the
   * job's final event (one from another job's stream), and such a stream would otherwise wait,
   * polled every 5 s, for good. The job's status is read before its events: a job seen final has
   * its final event committed (the same transaction), so that listing reaches it. Ends too when the
   * token it was opened with expires (the admin key does not): a stream is authorised once, and a
   * holder of a revoked key would otherwise read a long job's events for as long as it runs.
   */
  async function streamEvents(req: Request, res: Response, jobId: string, fromId: bigint) {
    res.status(200).set({
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    let cursor = fromId;
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
      if (expiry) clearTimeout(expiry);
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
          const final = await jobIsFinal(jobId);
          const events = await listEvents(pool, jobId, cursor, 500);
          for (const e of events) {
            if (closed) return;
            write(e);
            cursor = BigInt(e.id);
            const status = e.data.status as JobStatus | undefined;
            if (status && isFinal(status)) return finish();
          }
          if (events.length === 500) again = true;
          else if (final) return finish();
        } while (again && !closed);
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
    const expiresAtMs = req.principal?.expiresAtMs;
    const expiry =
      expiresAtMs === undefined
        ? null
        : setTimeout(
            () => {
              if (!closed) res.write(': token expired; reconnect with a fresh token and Last-Event-ID\n\n');
              finish();
            },
            Math.min(Math.max(expiresAtMs - Date.now(), 0), MAX_TIMER_MS),
          );
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
      200: {
        description: 'The file',
        headers: {
          ...checkpointHeaders,
          'Content-Length': {
            description: "The file's size in bytes",
            schema: { type: 'integer', minimum: 0 },
          },
          'Repr-Digest': {
            description: "The file's sha256 (RFC 9530): `sha-256=:<base64>:`",
            schema: { type: 'string' },
          },
        },
        content: { 'application/octet-stream': { schema: z.string() } },
      },
      206: {
        description: 'A range of the file',
        headers: {
          ...checkpointHeaders,
          'Content-Range': {
            description: 'The range sent: `bytes <first>-<last>/<size>`',
            schema: { type: 'string' },
          },
          'Content-Length': {
            description: "The range's length in bytes",
            schema: { type: 'integer', minimum: 0 },
          },
        },
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

/**
 * One `bytes=` range (the form download tools send); multi-range requests get the whole file, and
 * so does an invalid range-spec (RFC 9110 §14.2: ignored), `bytes=abc` as well as an inverted
 * `bytes=10-5`. Only a valid range outside the file is unsatisfiable.
 */
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
    // last-pos < first-pos is no range-spec at all (RFC 9110 §14.1.2).
    if (m[2] !== '' && Number(m[2]) < start) return null;
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}
