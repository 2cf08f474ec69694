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

function isUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === 'ECONNREFUSED' || code === 'ETIMEDOUT' || code === '57P01' || code === '53300';
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
