import { test } from 'node:test';
import assert from 'node:assert/strict';
import client from 'prom-client';
import { createApiMetrics } from '../../../api/http/prom.js';
import { createWorkerMetrics } from '../../../worker-node/metrics.js';
import { createSchedulerMetrics } from '../scheduler.js';
import { lintMetric, processDefaultNames, shapeOf } from '../conventions.js';

const noDatabase = { query: async () => ({ rows: [] }) } as never;

test('every metric of every process follows the naming conventions', () => {
  const registries = {
    api: createApiMetrics().registry,
    scheduler: createSchedulerMetrics(noDatabase).registry,
    worker: createWorkerMetrics('default').registry,
  };
  for (const [process, registry] of Object.entries(registries)) {
    const prefix = `timeshare_${process}_`;
    const all = registry.getMetricsAsArray();
    const defaults = processDefaultNames(prefix);
    const own = all.filter((m) => !defaults.has(shapeOf(m).name));
    assert.ok(all.length - own.length > 10, `${process} exports the process defaults under ${prefix}`);
    assert.ok(own.length >= 4, `${process} exports its own metrics`);
    const problems = own.flatMap((m) => lintMetric(shapeOf(m)));
    assert.deepEqual(problems, [], `${process}: ${problems.join('; ')}`);
  }
});

test('the linter catches what the conventions forbid', () => {
  const registry = new client.Registry();
  const opts = { help: 'h', registers: [registry] };
  new client.Counter({ name: 'timeshare_requests', ...opts });
  new client.Gauge({ name: 'timeshare_queue_total', ...opts });
  new client.Histogram({ name: 'timeshare_step_duration_ms', ...opts });
  new client.Gauge({ name: 'timeshare_job_progress', labelNames: ['job_id'], ...opts });
  new client.Gauge({ name: 'queue_depth', ...opts });
  const problems = registry.getMetricsAsArray().flatMap((m) => lintMetric(shapeOf(m)));
  assert.deepEqual(problems, [
    'timeshare_requests: counter without _total',
    'timeshare_queue_total: gauge ending in _total',
    'timeshare_step_duration_ms: unit is not a base unit (seconds, bytes, ratio)',
    'timeshare_step_duration_ms: histogram without a unit suffix',
    'timeshare_job_progress: unbounded label job_id',
    'queue_depth: no timeshare_ prefix',
  ]);
});
