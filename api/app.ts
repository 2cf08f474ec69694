/**
 * The API's request handler: the submission fast path first, then the Express application. Order
 * in Express matters: request id + logging, metrics, auth (identifies the caller; rejects only a
 * credential that is present and invalid), rate limit, body parsing with a size limit, routes, JSON
 * 404, the one error handler.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import { requestLog } from './http/request-log.js';
import { authenticate, identifier } from './auth/middleware.js';
import { errorHandler, notFoundRoute } from './http/errors.js';
import { createRateLimiter, rateLimit } from './http/rate-limit.js';
import { submitFastPath, type FastPathParts } from './http/submit-fast-path.js';
import { createSubmitter } from './jobs/submit.js';
import { createRegistry, generateDocument } from './http/openapi.js';
import { apiRoutes } from './routes/index.js';
import type { ApiDeps } from './deps.js';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export function createRequestHandler(deps: ApiDeps): RequestHandler {
  // One of each per process, shared by both paths: the token cache, the rate-limit buckets and
  // the admission groups.
  const parts: FastPathParts = {
    identify: identifier({
      adminKey: deps.config.TIMESHARE_ADMIN_KEY,
      jwtSecret: deps.config.TIMESHARE_JWT_SECRET,
    }),
    limiter: createRateLimiter(deps.config.TIMESHARE_RATE_LIMIT_PER_SECOND),
    submit: createSubmitter(deps),
  };
  const fast = submitFastPath(deps, parts);
  const app = createApp(deps, parts);
  return (req, res) => {
    if (!fast(req, res)) app(req, res);
  };
}

function createApp(deps: ApiDeps, parts: FastPathParts): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use(requestLog(deps.logger));
  app.use(deps.metrics.middleware);
  app.use(authenticate(parts.identify));
  app.use(rateLimit(parts.limiter));
  app.use(express.json({ limit: deps.config.TIMESHARE_BODY_LIMIT, strict: false }));

  const registry = createRegistry();
  let document: unknown = null;
  const documentOnce = () => (document ??= generateDocument(registry));
  for (const router of apiRoutes(deps, registry, parts.submit, documentOnce)) app.use(router);

  app.use(notFoundRoute);
  app.use(errorHandler);
  return app;
}
