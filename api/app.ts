/**
 * The API's request handler: the submission fast path first, then the Express application. Order
 * in Express matters: request id + logging, metrics, the dashboard's static files (/ui), auth
 * (identifies the caller; rejects only a credential that is present and invalid), the route gate
 * (path decodes, per-address limit without credentials, 404/405, 401 where credentials are needed),
 * per-principal rate limit, body parsing (JSON only, json-body.ts) with a size limit for routes that
 * declare a body, routes, JSON 404, the one error handler.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import { requestLog } from './http/request-log.js';
import { authenticate, identifier } from './auth/middleware.js';
import { errorHandler, notFoundRoute } from './http/errors.js';
import { createRateLimiter, rateLimit } from './http/rate-limit.js';
import { routeGate } from './http/route-gate.js';
import { jsonBody } from './http/json-body.js';
import { compileRoutes, routesOf } from './http/route-table.js';
import { refuseNul } from './http/nul-guard.js';
import { submitFastPath, type FastPathParts } from './http/submit-fast-path.js';
import { createSubmitter } from './jobs/submit.js';
import { createRegistry, generateDocument } from './http/openapi.js';
import { apiRoutes } from './routes/index.js';
import { dashboard, dashboardDir } from './http/dashboard.js';
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
    addressLimiter: createRateLimiter(deps.config.TIMESHARE_ADDRESS_RATE_LIMIT_PER_SECOND),
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

  const registry = createRegistry();
  let document: unknown = null;
  // Built before the stack below, which needs the routes they declare (api/routes/index.ts keeps
  // their mount order: job routes first, they carry nearly all traffic).
  const routers = apiRoutes(deps, registry, parts.submit, () => (document ??= generateDocument(registry)));

  app.use(requestLog(deps.logger));
  app.use(deps.metrics.middleware);
  // Static and public, so in front of auth and the route gate (which knows only /v1 routes).
  app.use(dashboard(dashboardDir(deps.config.TIMESHARE_UI_DIR)));
  app.use(authenticate(parts.identify));
  app.use(routeGate(compileRoutes(routesOf(registry)), parts.addressLimiter));
  app.use(rateLimit(parts.limiter));
  app.use(
    jsonBody({
      limit: deps.config.TIMESHARE_BODY_LIMIT,
      // body-parser parses in its own scope: the text is checked here, the parsed body below.
      verify: (req, buf) => {
        req.bodyText = buf;
      },
    }),
  );
  app.use((req, _res, next) => {
    if (req.bodyText) refuseNul(req.bodyText, req.body);
    next();
  });
  for (const router of routers) app.use(router);

  app.use(notFoundRoute);
  app.use(errorHandler);
  return app;
}
