/**
 * Which metric names the Grafana dashboard and the alert rules use, and which names a process
 * exports: a renamed metric would otherwise leave an empty panel or an alert that can never fire.
 * Expressions are parsed with Prometheus's own PromQL grammar, so a typo is an error too.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import YAML from 'yaml';

export const dashboardFile = 'infra/grafana/timeshare-dashboard.json';
export const alertsFile = 'infra/prometheus/timeshare-alerts.yml';

/** Series names in an exposition text, as Prometheus stores them (histograms: _bucket, _sum, _count). */
export function exportedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const line of exposition.split('\n')) {
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
export function selectedNames(expr: string): string[] {
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

/** Every expression of the dashboard's panels and of the alert rules, with where it is. */
export function referencedExprs(root: string): { where: string; expr: string }[] {
  const dashboard = JSON.parse(readFileSync(path.join(root, dashboardFile), 'utf8')) as {
    panels: { title: string; targets?: { expr: string }[] }[];
  };
  const rules = YAML.parse(readFileSync(path.join(root, alertsFile), 'utf8')) as {
    groups: { rules: { alert: string; expr: string }[] }[];
  };
  return [
    ...dashboard.panels.flatMap((p) =>
      (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, expr: grafanaExpr(t.expr) })),
    ),
    ...rules.groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr }))),
  ];
}

/** "where: name" for each name referenced but not in `exported`. */
export function unknownReferences(root: string, exported: Set<string>): string[] {
  return referencedExprs(root).flatMap(({ where, expr }) =>
    selectedNames(expr)
      .filter((n) => !exported.has(n))
      .map((n) => `${where}: ${n}`),
  );
}
