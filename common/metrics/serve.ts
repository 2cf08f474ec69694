/**
 * A process's Prometheus endpoint when it has no HTTP server of its own (scheduler, worker daemon):
 * `GET /metrics` on its own port, nothing else. Port 0 means off, so that tests and single-machine
 * runs that start several of these processes do not fight over one port (`npm start` gives each of
 * its processes a port of its own: infra/local/children.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { nonBlank } from '../config-values.js';

/**
 * The address the endpoint listens on: every interface by default, where the images and the chart
 * have Prometheus scrape it; `npm start` sets its API's HOST (127.0.0.1 unless told otherwise).
 */
export const metricsHostShape = {
  // A blank host would listen on every interface too, but say nothing about it.
  TIMESHARE_METRICS_HOST: nonBlank().default('0.0.0.0'),
};

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/** `host`: where to listen (the process's TIMESHARE_METRICS_HOST, `metricsHostShape`). */
export async function serveMetrics(
  registry: Registry,
  port: number,
  host = '0.0.0.0',
): Promise<MetricsServer | null> {
  if (port === 0) return null;
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err)),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
