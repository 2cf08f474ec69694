/**
 * The Grafana dashboard and the alert rules only use names that some process exports, in valid
 * PromQL. (`npm run test:deploy` checks the same against the running containers' endpoints.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiMetrics } from '../../../api/http/prom.js';
import { createWorkerMetrics } from '../../../worker-node/metrics.js';
import { createSchedulerMetrics } from '../scheduler.js';
import { exportedNames, referencedExprs, selectedNames, unknownReferences } from '../references.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

test('the dashboard and the alert rules only use exported metric names, in valid PromQL', async () => {
  const exported = new Set<string>();
  const registries = [
    createApiMetrics().registry,
    createSchedulerMetrics({ query: async () => ({ rows: [] }) } as never).registry,
    createWorkerMetrics('default').registry,
  ];
  for (const r of registries) for (const n of exportedNames(await r.metrics())) exported.add(n);

  const exprs = referencedExprs(root);
  assert.ok(exprs.filter((e) => e.where.startsWith('panel')).length >= 15, 'the dashboard has its panels');
  for (const a of ['TimeshareNoSchedulerLeader', 'TimeshareQueueWaitHigh', 'TimeshareNodeLost'])
    assert.ok(
      exprs.some((e) => e.where === `alert ${a}`),
      `alert ${a} is defined`,
    );
  assert.deepEqual(unknownReferences(root, exported), []);
});

test('the check rejects an unknown name and invalid PromQL', () => {
  assert.deepEqual(selectedNames('sum(rate(timeshare_nope_total[5m]))'), ['timeshare_nope_total']);
  assert.throws(() => selectedNames('sum(rate(timeshare_jobs[5m])'), /not PromQL/);
  assert.deepEqual(
    exportedNames('# TYPE timeshare_x_seconds histogram\n'),
    new Set([
      'timeshare_x_seconds',
      'timeshare_x_seconds_bucket',
      'timeshare_x_seconds_sum',
      'timeshare_x_seconds_count',
    ]),
  );
});
