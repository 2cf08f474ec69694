/**
 * A process's Prometheus endpoint when it has no HTTP server of its own (scheduler, worker daemon):
 * `GET /metrics` on its own port, nothing else. Port 0 means off, so that tests and single-machine
 * runs that start several of these processes do not fight over one port.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

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
