/**
 * With TIMESHARE_API_WORKERS > 1 the API runs as a node:cluster: the primary forks that many worker
 * processes, each a complete API on the shared port (the primary hands connections out round-robin),
 * replaces a worker that dies, forwards shutdown signals, and sums Prometheus metrics across the
 * workers for whichever worker gets scraped. One Node process is one core; the submission path is
 * CPU-bound, so this is how the API uses more than one.
 */
import cluster, { type Worker } from 'node:cluster';
import client from 'prom-client';
import type { Logger } from '../common/logger.js';
import { CONFIG_EXIT_CODE } from '../common/config.js';

/** A worker asks the primary for everyone's metrics; the primary asks each worker for its own. */
const CLUSTER_REQUEST = 'timeshare:cluster-metrics-request';
const CLUSTER_REPLY = 'timeshare:cluster-metrics-reply';
const OWN_REQUEST = 'timeshare:worker-metrics-request';
const OWN_REPLY = 'timeshare:worker-metrics-reply';
/** A worker that listens and does not answer in this long fails the scrape (partial sums would read as counter resets). */
const WORKER_REPLY_MS = 5_000;

type Request = { type: typeof CLUSTER_REQUEST | typeof OWN_REQUEST; id: number };
type Reply<T> = { type: typeof CLUSTER_REPLY | typeof OWN_REPLY; id: number; value?: T; error?: string };
type MetricsJson = Awaited<ReturnType<client.Registry['getMetricsAsJSON']>>;

/**
 * Request/reply over a process's IPC channel: `send` posts a request, and the reply with its id
 * settles it (or the timeout does).
 */
function rpc<T>(replyType: Reply<T>['type'], timeoutMs: number) {
  let next = 0;
  const waiting = new Map<number, { resolve(v: T): void; reject(e: Error): void }>();
  return {
    /** Settles every call still waiting: the channel they wait on has closed. */
    rejectAll(e: Error) {
      const all = [...waiting.values()];
      waiting.clear();
      for (const w of all) w.reject(e);
    },
    receive(m: Reply<T>) {
      if (m?.type !== replyType) return;
      const w = waiting.get(m.id);
      waiting.delete(m.id);
      if (m.value !== undefined) w?.resolve(m.value);
      else w?.reject(new Error(m.error ?? 'cluster metrics failed'));
    },
    /** `send` posts the request, and calls `fail` if it could not. */
    call(
      send: (r: Request, fail: (e: Error) => void) => unknown,
      type: Request['type'],
      what: string,
    ): Promise<T> {
      const id = next++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`${what} did not answer within ${timeoutMs} ms`));
        }, timeoutMs);
        const settle =
          <A>(f: (a: A) => void) =>
          (a: A) => {
            clearTimeout(timer);
            f(a);
          };
        waiting.set(id, { resolve: settle(resolve), reject: settle(reject) });
        send({ type, id }, (e) => {
          waiting.delete(id);
          settle(reject)(e);
        });
      });
    },
  };
}

export function runPrimary(workers: number, logger: Logger): void {
  let stopping = false;
  const recentDeaths: number[] = [];
  // Only workers that listen are asked for their metrics: one still starting has served nothing
  // and may not yet answer (its message would be lost), which would fail every scrape meanwhile.
  const listening = new Set<Worker>();
  /** Per worker, settled with nothing once its channel closes: a worker that goes is left out. */
  const gone = new Map<Worker, Promise<MetricsJson>>();
  const own = rpc<MetricsJson>(OWN_REPLY, WORKER_REPLY_MS);

  /**
   * One worker's registry. A worker whose channel closes (it is exiting) before it answers is left
   * out, as one that died earlier is; one that stays and does not answer fails the scrape.
   */
  function askWorker(w: Worker): Promise<MetricsJson> {
    if (!w.isConnected()) return Promise.resolve([]);
    const asked = own
      .call((r, fail) => w.send(r, (err) => err && fail(err)), OWN_REQUEST, `api worker ${w.process.pid}`)
      .catch((err: unknown) => (w.isConnected() ? Promise.reject(err) : []));
    return Promise.race([asked, gone.get(w) ?? asked]);
  }

  async function everyonesMetrics(): Promise<string> {
    const parts = await Promise.all([...listening].map(askWorker));
    return client.AggregatorRegistry.aggregate(parts).metrics();
  }

  const fork = (index: number) => {
    const worker = cluster.fork();
    worker.on('listening', () => listening.add(worker));
    // 'disconnect' comes before 'exit', with turns of the event loop between: a scrape then must
    // not write to the closed channel (unhandled, that error ended the primary, and every worker).
    gone.set(worker, new Promise((resolve) => worker.once('disconnect', () => resolve([]))));
    worker.on('disconnect', () => listening.delete(worker));
    worker.on('error', (err) => logger.warn({ err, index }, 'api worker channel error'));
    worker.on('message', (m: Request | Reply<MetricsJson>) => {
      own.receive(m as Reply<MetricsJson>);
      if (m?.type !== CLUSTER_REQUEST) return;
      const reply = (r: Omit<Reply<string>, 'type' | 'id'>) =>
        worker.isConnected() && worker.send({ type: CLUSTER_REPLY, id: m.id, ...r });
      everyonesMetrics().then(
        (value) => reply({ value }),
        (err: unknown) => reply({ error: err instanceof Error ? err.message : String(err) }),
      );
    });
    worker.on('exit', (code, signal) => {
      listening.delete(worker);
      gone.delete(worker);
      if (stopping) {
        if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
        return;
      }
      if (code === CONFIG_EXIT_CODE) {
        // Every worker reads the same configuration: the others would refuse it too.
        logger.fatal({ index }, 'an api worker refused its configuration; stopping');
        stopping = true;
        for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
        process.exit(CONFIG_EXIT_CODE);
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
  // The primary answers within its own timeout; this one covers a reply lost to a closing
  // channel, which otherwise left the scrape's HTTP request open until the process ended.
  const everyone = rpc<string>(CLUSTER_REPLY, WORKER_REPLY_MS + 1_000);
  process.on('disconnect', () => everyone.rejectAll(new Error('the api primary is gone')));
  process.on('message', (m: Request | Reply<string>) => {
    everyone.receive(m as Reply<string>);
    if (m?.type !== OWN_REQUEST) return;
    const reply = (r: Omit<Reply<MetricsJson>, 'type' | 'id'>) =>
      process.send?.({ type: OWN_REPLY, id: m.id, ...r });
    registry.getMetricsAsJSON().then(
      (value) => reply({ value }),
      (err: unknown) => reply({ error: err instanceof Error ? err.message : String(err) }),
    );
  });
  return () =>
    everyone.call(
      (r, fail) => process.send?.(r, undefined, undefined, (err) => err && fail(err)),
      CLUSTER_REQUEST,
      'the api primary',
    );
}
