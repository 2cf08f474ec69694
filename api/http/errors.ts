/** The one error shape everywhere, including body-parser failures and unknown routes. */
import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { sendJson } from './send-json.js';

export function notFoundRoute(req: Request, _res: Response, next: NextFunction) {
  next(new ApiError('not_found', `no route for ${req.method} ${req.path}`));
}

interface HttpishError {
  type?: string;
  status?: number;
  expose?: boolean;
  message?: string;
}

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = (err ?? {}) as HttpishError;
  // Express decodes path parameters itself; the route gate refuses such paths first, this is the backstop.
  if (err instanceof URIError)
    return new ApiError('invalid_request', 'the path is not valid percent-encoding');
  if (e.type === 'entity.too.large') return new ApiError('payload_too_large', 'request body is too large');
  if (e.type === 'entity.parse.failed')
    return new ApiError('invalid_request', 'request body is not valid JSON');
  if (e.type === 'charset.unsupported' || e.type === 'encoding.unsupported')
    return new ApiError('invalid_request', e.message ?? 'unsupported body encoding');
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500 && e.expose)
    return new ApiError('invalid_request', e.message ?? 'bad request');
  if (isUnavailable(err)) return new ApiError('unavailable', 'a dependency is unavailable; retry later');
  return new ApiError('internal', 'internal error');
}

/**
 * Errors that say a dependency (PostgreSQL, Redis, the checkpoint store) is down, restarting or
 * unreachable, rather than that the request or the code is wrong: answered 503 `unavailable` with
 * `Retry-After`, which clients and daemons retry. Found under Prisma's wrapping too (its own codes,
 * and the driver's error in `meta.driverAdapterError`), and in `cause` and AggregateError chains.
 */
const UNAVAILABLE_CODES = new Set([
  // Sockets and name lookups.
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  // PostgreSQL: shut down by an admin, crash shutdown, starting up / shutting down / in recovery,
  // too many connections (class 08, connection exceptions, is matched below).
  '57P01',
  '57P02',
  '57P03',
  '53300',
  // Prisma: can't reach the server, timed out reaching it, operation timed out, server closed the
  // connection, too many connections.
  'P1001',
  'P1002',
  'P1008',
  'P1017',
  'P2037',
]);

/** Driver errors that carry no code, matched by their exact message. */
const UNAVAILABLE_MESSAGES = new Set([
  // pg: the socket ended under a client, a connect that timed out, a client whose connection died.
  'Connection terminated unexpectedly',
  'Connection terminated due to connection timeout',
  'Client has encountered a connection error and is not queryable',
  'timeout exceeded when trying to connect',
  // ioredis: a command on (or queued for) a connection that closed, and one refused while offline.
  'Connection is closed.',
  "Stream isn't writeable and enableOfflineQueue options is false",
]);

/** An error, or Prisma's record of the driver's (`originalCode`). */
interface Outage {
  code?: unknown;
  name?: unknown;
  message?: unknown;
  originalCode?: unknown;
}

function isUnavailableOne(e: Outage): boolean {
  for (const code of [e.code, e.originalCode]) {
    if (typeof code !== 'string') continue;
    if (UNAVAILABLE_CODES.has(code)) return true;
    // SQLSTATE class 08: connection exceptions.
    if (/^08[0-9A-Z]{3}$/.test(code)) return true;
  }
  // ioredis gave up on a command while it reconnects (`maxRetriesPerRequest`).
  if (e.name === 'MaxRetriesPerRequestError') return true;
  if (typeof e.message !== 'string') return false;
  // Redis is restarting and loading its dataset.
  if (e.name === 'ReplyError' && e.message.startsWith('LOADING ')) return true;
  return e.code === undefined && UNAVAILABLE_MESSAGES.has(e.message);
}

export function isUnavailable(err: unknown): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length && seen.size < 16) {
    const e = queue.shift();
    if (e === null || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    const o = e as Outage & { cause?: unknown; errors?: unknown; meta?: { driverAdapterError?: unknown } };
    if (isUnavailableOne(o)) return true;
    queue.push(o.cause, o.meta?.driverAdapterError);
    if (Array.isArray(o.errors)) queue.push(...o.errors);
  }
  return false;
}

/** Answers any failure with the one error shape; shared by Express and the submission fast path. */
export function sendError(res: ServerResponse, err: unknown, log: Logger, reqId: string): void {
  const apiErr = toApiError(err);
  if (apiErr.status >= 500) log.error({ err, reqId }, 'request failed');
  if (res.headersSent) {
    res.end();
    return;
  }
  const wait = apiErr.details.retryAfterSeconds;
  if (typeof wait === 'number') res.setHeader('Retry-After', String(wait));
  else if (apiErr.code === 'rate_limited' || apiErr.code === 'unavailable') res.setHeader('Retry-After', '1');
  sendJson(res, apiErr.status, apiErr.toBody());
}

export function errorHandler(err: unknown, req: Request, res: Response, _next: NextFunction) {
  sendError(res, err, req.log, req.id);
}
