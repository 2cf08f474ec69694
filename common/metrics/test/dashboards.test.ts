/**
 * The Grafana dashboard and the alert rules may only use metric names that some process exports:
 * a renamed metric would otherwise leave an empty panel or an alert that can never fire. Every
 * expression must also parse as PromQL (with Prometheus's own grammar).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parser } from '@prometheus-io/lezer-promql';
import YAML from 'yaml';
import type { Registry } from 'prom-client';
import { createApiMetrics } from '../../../api/http/prom.js';
import { createWorkerMetrics } from '../../../worker-node/metrics.js';
import { createSchedulerMetrics } from '../scheduler.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Series names a registry exposes, as Prometheus stores them (histograms: _bucket, _sum, _count). */
async function exportedNames(registry: Registry): Promise<Set<string>> {
  const names = new Set<string>();
  for (const line of (await registry.metrics()).split('\n')) {
    const m = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (!m) continue;
    const [, name, type] = m as unknown as [string, string, string];
    names.add(name);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
    if (type === 'summary') for (const s of ['_sum', '_count']) names.add(name + s);
  }
  return names;
}

/** Metric names an expression selects; throws where it does not parse. */
function selectedNames(expr: string): string[] {
  const names: string[] = [];
  const errors: string[] = [];
  parser.parse(expr).iterate({
    enter: (n) => {
      if (n.type.isError) errors.push(`at ${n.from}: ${expr.slice(n.from, n.from + 20)}`);
      if (n.name === 'Identifier' && n.node.parent?.name === 'VectorSelector')
        names.push(expr.slice(n.from, n.to));
    },
  });
  if (errors.length) throw new Error(`not PromQL: ${expr} (${errors.join(', ')})`);
  return names;
}

/** Grafana's variables, replaced by values of the same kind so that the rest can be parsed. */
const grafanaExpr = (e: string) => e.replaceAll('$__rate_interval', '5m').replaceAll('$pool', '.*');

interface Panel {
  title: string;
  targets?: { expr: string }[];
}

test('the dashboard and the alert rules only use exported metric names, in valid PromQL', async () => {
  const exported = new Set<string>();
  const registries = [
    createApiMetrics().registry,
    createSchedulerMetrics({ query: async () => ({ rows: [] }) } as never).registry,
    createWorkerMetrics('default').registry,
  ];
  for (const r of registries) for (const n of await exportedNames(r)) exported.add(n);

  const dashboard = JSON.parse(
    readFileSync(path.join(root, 'infra/grafana/timeshare-dashboard.json'), 'utf8'),
  ) as { panels: Panel[]; templating: { list: { query: unknown }[] } };
  const exprs: [string, string][] = [];
  for (const p of dashboard.panels)
    for (const t of p.targets ?? []) exprs.push([`panel "${p.title}"`, grafanaExpr(t.expr)]);
  assert.ok(exprs.length >= 15, 'the dashboard has its panels');

  const rules = YAML.parse(
    readFileSync(path.join(root, 'infra/prometheus/timeshare-alerts.yml'), 'utf8'),
  ) as {
    groups: { rules: { alert: string; expr: string }[] }[];
  };
  const alerts = rules.groups.flatMap((g) => g.rules);
  for (const a of ['TimeshareNoSchedulerLeader', 'TimeshareQueueWaitHigh', 'TimeshareNodeLost'])
    assert.ok(
      alerts.some((r) => r.alert === a),
      `alert ${a} is defined`,
    );
  for (const r of alerts) exprs.push([`alert ${r.alert}`, r.expr]);

  const unknown: string[] = [];
  for (const [where, expr] of exprs)
    for (const name of selectedNames(expr)) if (!exported.has(name)) unknown.push(`${where}: ${name}`);
  assert.deepEqual(unknown, []);
});

test('the check rejects an unknown name and invalid PromQL', () => {
  assert.deepEqual(selectedNames('sum(rate(timeshare_nope_total[5m]))'), ['timeshare_nope_total']);
  assert.throws(() => selectedNames('sum(rate(timeshare_jobs[5m])'), /not PromQL/);
});
