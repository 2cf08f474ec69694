/**
 * The environments `npm start` gives the processes it starts, apart from what only exists once they
 * run (the worker's node key). All get the same database, Redis, secrets and API address; each
 * process with a Prometheus endpoint of its own gets a port of its own: TIMESHARE_METRICS_PORT=P
 * (non-zero) serves scheduler-a's metrics on P, scheduler-b's on P+1 and the worker's on P+2, on
 * TIMESHARE_METRICS_HOST, else on the API's HOST (127.0.0.1 unless told otherwise). One port for
 * all three had the second to start refuse it (address in use) and restart forever. The API serves
 * its own on its port, at /metrics; the webhook dispatcher has none.
 */
import type { LauncherConfig } from './config.js';

/** The processes `npm start` runs, in the order it starts them. */
export const childNames = ['api', 'scheduler-a', 'scheduler-b', 'webhooks', 'worker'] as const;
export type ChildName = (typeof childNames)[number];

/** Those with an endpoint of their own, in the order of their ports. */
export const metricsChildren = ['scheduler-a', 'scheduler-b', 'worker'] as const satisfies ChildName[];
export type MetricsChild = (typeof metricsChildren)[number];
const servesMetrics = (name: ChildName): name is MetricsChild =>
  (metricsChildren as readonly ChildName[]).includes(name);

type MetricsSettings = Pick<
  LauncherConfig,
  'HOST' | 'PORT' | 'TIMESHARE_METRICS_PORT' | 'TIMESHARE_METRICS_HOST'
>;

/** Each metrics child's port, or null when TIMESHARE_METRICS_PORT is 0 (off). */
export function metricsPorts(config: MetricsSettings): Record<MetricsChild, number> | null {
  const first = config.TIMESHARE_METRICS_PORT;
  if (first === 0) return null;
  return { 'scheduler-a': first, 'scheduler-b': first + 1, worker: first + 2 };
}

/** Where the metrics endpoints listen. */
export const metricsHostOf = (config: MetricsSettings) => config.TIMESHARE_METRICS_HOST ?? config.HOST;

/** What is wrong with the metrics ports (one of them is the API's), or null. */
export function metricsPortsProblem(config: MetricsSettings): string | null {
  const ports = metricsPorts(config);
  if (!ports || !Object.values(ports).includes(config.PORT)) return null;
  const [name] = Object.entries(ports).find(([, p]) => p === config.PORT)!;
  return (
    `TIMESHARE_METRICS_PORT=${config.TIMESHARE_METRICS_PORT} gives ${name} port ${config.PORT}, the API's ` +
    `(the schedulers and the worker take ${config.TIMESHARE_METRICS_PORT}–${config.TIMESHARE_METRICS_PORT + 2})`
  );
}

/** `http://host:port/metrics` of each process that serves metrics, the API's first. */
export function metricsUrls(config: MetricsSettings): { name: ChildName; url: string }[] {
  const ports = metricsPorts(config);
  const host = metricsHostOf(config);
  return [
    { name: 'api', url: `http://${config.HOST}:${config.PORT}/metrics` },
    ...(ports ? metricsChildren.map((name) => ({ name, url: `http://${host}:${ports[name]}/metrics` })) : []),
  ];
}

/**
 * Each child's environment: `shared` (what all of them get) with its metrics endpoint's settings;
 * the API and the webhook dispatcher get none (the API's is on its own port).
 */
export function childEnvironments(
  shared: NodeJS.ProcessEnv,
  config: MetricsSettings,
): Record<ChildName, NodeJS.ProcessEnv> {
  const ports = metricsPorts(config);
  const { TIMESHARE_METRICS_PORT: _port, TIMESHARE_METRICS_HOST: _host, ...rest } = shared;
  const env = (name: ChildName): NodeJS.ProcessEnv =>
    servesMetrics(name)
      ? {
          ...rest,
          TIMESHARE_METRICS_PORT: String(ports?.[name] ?? 0),
          TIMESHARE_METRICS_HOST: metricsHostOf(config),
        }
      : rest;
  return Object.fromEntries(childNames.map((name) => [name, env(name)])) as Record<
    ChildName,
    NodeJS.ProcessEnv
  >;
}
