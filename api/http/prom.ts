/** Prometheus metrics for one API instance (own registry, so tests can run several apps). */
import client from 'prom-client';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { clusterMetrics } from '../cluster.js';

export function createApiMetrics() {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'timeshare_api_' });
  const requests = new client.Histogram({
    name: 'timeshare_api_http_request_duration_seconds',
    help: 'HTTP request latency by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    registers: [registry],
  });
  const jobsSubmitted = new client.Counter({
    name: 'timeshare_jobs_submitted_total',
    help: 'Jobs accepted by POST /v1/jobs',
    registers: [registry],
  });
  const admissionBatchSize = new client.Histogram({
    name: 'timeshare_api_admission_batch_size',
    help: 'Submissions admitted together by one admit_jobs call',
    buckets: [1, 2, 4, 8, 16, 32, 64],
    registers: [registry],
  });
  const quotaRejections = new client.Counter({
    name: 'timeshare_quota_rejections_total',
    help: 'Submissions rejected by a quota',
    labelNames: ['quota'] as const,
    registers: [registry],
  });

  /** Observes the request's latency when its response is sent, labelled with `route()` then. */
  function timeRequest(req: IncomingMessage, res: ServerResponse, route: () => string) {
    const end = requests.startTimer();
    res.on('finish', () => end({ method: req.method, route: route(), status: String(res.statusCode) }));
  }

  function middleware(req: Request, res: Response, next: NextFunction) {
    // The matched route pattern, never the raw path: ids in paths would explode cardinality.
    timeRequest(req, res, () => (req.route?.path ? `${req.baseUrl}${req.route.path}` : 'unmatched'));
    next();
  }

  /** The exposition text: this process's metrics, or every worker's summed when clustered. */
  const collect = clusterMetrics(registry) ?? (() => registry.metrics());

  return { registry, middleware, timeRequest, jobsSubmitted, admissionBatchSize, quotaRejections, collect };
}

export type ApiMetrics = ReturnType<typeof createApiMetrics>;
