/**
 * Request ids and one structured log line per request (pino). Lighter than pino-http, which builds
 * a child logger and serialises the whole request on every call — a fifth of the CPU of a small
 * request here. The id comes from `X-Request-Id` when the caller sends a sane one, and is echoed.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../../common/logger.js';

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    log: Logger;
  }
}

const quiet = new Set(['/healthz', '/readyz', '/metrics']);
/**
 * What every daemon sends all the time (assignment polls, heartbeats, per-step reports): logged at
 * debug when it succeeds, so that an idle `npm start` does not print a line a second and a busy
 * one ten; a failure is still a warning or an error.
 */
const routine = /^\/v1\/nodes\/[^/]+\/(assignments|heartbeat|jobs\/[^/]+\/report)$/;

/**
 * Gives the request its id (echoed as `X-Request-Id`) and logs one line when the response is sent.
 * Shared by the Express stack and the submission fast path.
 */
export function beginRequest(
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): string {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
  res.setHeader('X-Request-Id', id);
  if (quiet.has(path) || !logger.isLevelEnabled('warn')) return id;
  const started = performance.now();
  res.on('finish', () => {
    const status = res.statusCode;
    const level = status >= 500 ? 'error' : status >= 400 ? 'warn' : routine.test(path) ? 'debug' : 'info';
    if (!logger.isLevelEnabled(level)) return;
    logger[level](
      { reqId: id, method: req.method, url: req.url, status, ms: +(performance.now() - started).toFixed(2) },
      'request completed',
    );
  });
  return id;
}

export function requestLog(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    req.id = beginRequest(logger, req, res, req.path);
    req.log = logger;
    next();
  };
}
