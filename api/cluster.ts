/**
 * With TIMESHARE_API_WORKERS > 1 the API runs as a node:cluster: the primary forks that many worker
 * processes, each a complete API on the shared port (the primary hands connections out round-robin),
 * replaces a worker that dies, forwards shutdown signals, and sums Prometheus metrics across the
 * workers for whichever worker gets scraped. One Node process is one core; the submission path is
 * CPU-bound, so this is how the API uses more than one.
 */
import cluster from 'node:cluster';
import client from 'prom-client';
import type { Logger } from '../common/logger.js';

const METRICS_REQUEST = 'timeshare:cluster-metrics-request';
const METRICS_REPLY = 'timeshare:cluster-metrics-reply';

interface MetricsRequest {
  type: typeof METRICS_REQUEST;
  id: number;
}
interface MetricsReply {
  type: typeof METRICS_REPLY;
  id: number;
  text?: string;
  error?: string;
}

export function runPrimary(workers: number, logger: Logger): void {
  const aggregator = new client.AggregatorRegistry();
  let stopping = false;
  const recentDeaths: number[] = [];

  const fork = (index: number) => {
    const worker = cluster.fork();
    worker.on('message', (m: MetricsRequest) => {
      if (m?.type !== METRICS_REQUEST) return;
      const reply = (r: Omit<MetricsReply, 'type' | 'id'>) =>
        worker.isConnected() && worker.send({ type: METRICS_REPLY, id: m.id, ...r });
      aggregator.clusterMetrics().then(
        (text) => reply({ text }),
        (err: unknown) => reply({ error: String(err) }),
      );
    });
    worker.on('exit', (code, signal) => {
      if (stopping) {
        if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
        return;
      }
      const now = Date.now();
      recentDeaths.push(now);
      while (recentDeaths[0]! < now - 10_000) recentDeaths.shift();
      if (recentDeaths.length > 2 * workers) {
        logger.fatal({ index, code, signal }, 'api workers keep dying; giving up');
        process.exit(1);
      }
      logger.error({ index, code, signal }, 'api worker died; starting a replacement');
      fork(index);
    });
  };

  for (let i = 0; i < workers; i++) fork(i);
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping api workers');
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill(signal);
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

/**
 * In a worker, makes `registry` part of the cluster-wide metrics and returns a function that
 * collects them (from every worker, through the primary); null outside a cluster.
 */
export function clusterMetrics(registry: client.Registry): (() => Promise<string>) | null {
  if (!cluster.isWorker) return null;
  new client.AggregatorRegistry(); // answers the primary's collection requests
  client.AggregatorRegistry.setRegistries([registry]);
  let next = 0;
  const waiting = new Map<number, { resolve(t: string): void; reject(e: Error): void }>();
  process.on('message', (m: MetricsReply) => {
    if (m?.type !== METRICS_REPLY) return;
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.text !== undefined) w?.resolve(m.text);
    else w?.reject(new Error(m.error ?? 'cluster metrics failed'));
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve, reject });
      process.send?.({ type: METRICS_REQUEST, id } satisfies MetricsRequest);
    });
}
