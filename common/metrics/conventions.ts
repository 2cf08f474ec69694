/**
 * The Prometheus naming rules our metrics follow (the ones promtool's linter checks, plus ours), as
 * a function a test runs over every registry: a name is snake_case with our prefix, says its unit in
 * base units, ends in `_total` exactly when it is a counter, and no label can take one value per job,
 * node or request (those belong in logs and the API, not in time series).
 */
import client, { type MetricObject } from 'prom-client';

const NON_BASE_UNITS =
  /_(milliseconds|millis|ms|microseconds|us|nanoseconds|ns|minutes|hours|days|kilobytes|megabytes|gigabytes|kb|mb|gb|percent)(_|$)/;
const RESERVED_SUFFIX = /_(bucket|sum|count|created)$/;
/** Labels whose values grow with usage; a metric carrying one has unbounded series. */
export const UNBOUNDED_LABELS = new Set([
  'job',
  'job_id',
  'jobid',
  'node',
  'node_id',
  'tenant_id',
  'request_id',
  'id',
  'path',
  'url',
  'user',
]);

/**
 * prom-client's process defaults, which keep their upstream names (three gauges end in `_total`):
 * renaming them would break every stock Node.js dashboard, so the linter leaves them alone.
 */
export function processDefaultNames(prefix: string): Set<string> {
  const defaults = new client.Registry();
  client.collectDefaultMetrics({ register: defaults, prefix });
  return new Set(defaults.getMetricsAsArray().map((m) => shapeOf(m).name));
}

export interface MetricShape {
  name: string;
  type: string;
  labelNames: readonly string[];
}

export function shapeOf(metric: MetricObject): MetricShape {
  const m = metric as unknown as {
    name: string;
    labelNames?: readonly string[];
    constructor: { name: string };
  };
  return { name: m.name, type: m.constructor.name.toLowerCase(), labelNames: m.labelNames ?? [] };
}

/** What is wrong with one metric's name and labels; empty when nothing is. */
export function lintMetric({ name, type, labelNames }: MetricShape): string[] {
  const problems: string[] = [];
  if (!/^[a-z][a-z0-9_]*$/.test(name) || name.includes('__')) problems.push('not snake_case');
  if (!name.startsWith('timeshare_')) problems.push('no timeshare_ prefix');
  if (type === 'counter' && !name.endsWith('_total')) problems.push('counter without _total');
  if (type !== 'counter' && name.endsWith('_total')) problems.push(`${type} ending in _total`);
  if (NON_BASE_UNITS.test(name)) problems.push('unit is not a base unit (seconds, bytes, ratio)');
  if (RESERVED_SUFFIX.test(name)) problems.push('ends in a suffix Prometheus reserves');
  if (type === 'histogram' && !/_(seconds|bytes|size|ratio|jobs|tokens)$/.test(name))
    problems.push('histogram without a unit suffix');
  for (const label of labelNames) {
    if (UNBOUNDED_LABELS.has(label.toLowerCase())) problems.push(`unbounded label ${label}`);
    if (!/^[a-z][a-z0-9_]*$/.test(label)) problems.push(`label ${label} not snake_case`);
  }
  return problems.map((p) => `${name}: ${p}`);
}
