/**
 * What an operator reads is what the processes do: every variable a process reads is in README's
 * Configuration table with the default it really has, every variable the table names is read, and
 * the compose stack and the Helm chart set only variables some process reads, with values it takes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { apiConfigSchema, loadConfig } from '../../api/config.js';
import { loadSchedulerConfig, schedulerConfigSchema } from '../../scheduler/config.js';
import { loadWebhookConfig, webhookConfigSchema } from '../../webhooks/config.js';
import { loadWorkerConfig, workerEnvSchema } from '../../worker-node/config.js';
import { launcherConfigSchema, loadLauncherConfig } from '../../infra/local/config.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

const secrets = { TIMESHARE_ADMIN_KEY: 'a'.repeat(16), TIMESHARE_JWT_SECRET: 's'.repeat(32) };
const nodeKey = { TIMESHARE_NODE_KEY: 'tsn_docs' };
const readByProcesses = new Set(
  [
    apiConfigSchema,
    schedulerConfigSchema,
    webhookConfigSchema,
    workerEnvSchema,
    launcherConfigSchema,
  ].flatMap((s) => Object.keys(s.shape)),
);
/** Read outside the processes' configuration: where, so that a variable no longer read is noticed. */
const readElsewhere: Record<string, string> = {
  TIMESHARE_API_KEY: 'cli/context.ts',
  XDG_CONFIG_HOME: 'cli/config.ts',
  TEST_DATABASE_URL: 'test/helpers/database.ts',
  TEST_REDIS_URL: 'test/helpers/redis.ts',
  TEST_LOG_LEVEL: 'test/helpers/cluster.ts',
  TIMESHARE_TEST_DEVICE_WORK: 'worker-node/emulated-devices.ts',
  TIMESHARE_TEST_LONG_COMPLETIONS: 'worker-node/long-completions.ts',
  TIMESHARE_MIGRATE_DEBUG: 'prisma/tools/schema-engine.ts',
  TIMESHARE_NO_BLAS: 'native/tools/detect-blas.mjs',
};

/** Each process's defaults, by variable (a variable read by several has one default in each). */
const defaults = new Map<string, Set<string>>();
for (const config of [
  loadConfig(secrets),
  loadSchedulerConfig({}),
  loadWebhookConfig({}),
  loadWorkerConfig([], nodeKey),
  loadLauncherConfig({}),
] as Record<string, unknown>[]) {
  for (const [k, v] of Object.entries(config)) {
    // Not defaults: what this test had to give (the API's secrets, the worker's key), and flags.
    if (v === undefined || k in secrets || k in nodeKey || !/^[A-Z]/.test(k)) continue;
    defaults.set(k, (defaults.get(k) ?? new Set()).add(String(v)));
  }
}

const section = /\n## Configuration\n([\s\S]*?)\n## /.exec(read('README.md'))![1]!;
const rows = section
  .split('\n')
  .filter((l) => l.startsWith('| `'))
  .map((l) =>
    l
      .slice(1, -1)
      .split(/\s\|\s/)
      .map((c) => c.trim()),
  );
const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

test("every variable a process reads is in README's Configuration table", () => {
  const missing = [...readByProcesses].filter((k) => !section.includes(`\`${k}\``));
  assert.deepEqual(missing, []);
});

test('every variable the table names is read', () => {
  for (const [vars] of rows) {
    for (const v of ticked(vars!)) {
      if (readByProcesses.has(v)) continue;
      assert.ok(readElsewhere[v], `${v} is documented but no process reads it`);
      assert.ok(read(readElsewhere[v]).includes(v), `${v} is no longer read in ${readElsewhere[v]}`);
    }
  }
});

test("the table's defaults are the code's", () => {
  for (const [vars, fallback] of rows) {
    const names = ticked(vars!);
    const written = ticked(fallback!);
    names.forEach((name, i) => {
      const code = defaults.get(name);
      if (!code || written.length === 0) return;
      // One variable: its default is among the cell's values; several: in the same order.
      if (names.length === 1) for (const d of code) assert.ok(written.includes(d), `${name}: ${d}`);
      else if (written.length === names.length) assert.ok(code.has(written[i]!), `${name}: ${written[i]}`);
    });
  }
});

test('the compose stack sets variables the processes read, with values they take', () => {
  const compose = parseYaml(read('infra/compose/docker-compose.yml'), { merge: true }) as {
    services: Record<string, { environment?: Record<string, string>; command?: string[] }>;
  };
  // ${NAME:-default} as compose fills it in when NAME is unset.
  const filled = (env: Record<string, string>) =>
    Object.fromEntries(
      Object.entries(env).map(([k, v]) => [k, String(v).replace(/\$\{\w+:-([^}]*)\}/g, '$1')]),
    );
  const loads: Record<string, (env: Record<string, string>, args: string[]) => unknown> = {
    api: (env) => loadConfig(env),
    webhooks: (env) => loadWebhookConfig(env),
    'scheduler-a': (env) => loadSchedulerConfig(env),
    'worker-a': (env, args) => loadWorkerConfig(args, { ...env, ...nodeKey }),
  };
  for (const [name, load] of Object.entries(loads)) {
    const service = compose.services[name]!;
    const env = filled(service.environment ?? {});
    for (const k of Object.keys(env)) {
      assert.ok(readByProcesses.has(k) || k.startsWith('AWS_'), `${name}: ${k} is read by no process`);
    }
    assert.doesNotThrow(() => load(env, service.command ?? []), `${name}'s environment is accepted`);
  }
});

test("the chart's ConfigMap holds variables the processes read, by default with the code's defaults", () => {
  const values = parseYaml(read('infra/helm/timeshare/values.yaml')) as { config: Record<string, unknown> };
  const configMap = read('infra/helm/timeshare/templates/configmap.yaml');
  const fromValues = [...configMap.matchAll(/^\s+(\w+): \{\{ \.Values\.config\.(\w+) \| quote \}\}/gm)];
  assert.ok(fromValues.length >= 4, 'the ConfigMap template is read');
  for (const [, name, key] of fromValues) {
    assert.ok(readByProcesses.has(name!), `${name} is read by no process`);
    assert.ok(defaults.get(name!)?.has(String(values.config[key!])), `config.${key} is ${name}'s default`);
  }
  const templates = ['api-deployment', 'scheduler-deployment', 'webhooks-deployment', 'worker-daemonset'];
  for (const t of ['configmap', 'secret', ...templates]) {
    const text = read(`infra/helm/timeshare/templates/${t}.yaml`);
    const names = [
      ...text.matchAll(/^\s+- name: ([A-Z][A-Z0-9_]+)$/gm),
      ...text.matchAll(/^\s+([A-Z][A-Z0-9_]+): /gm),
    ].map((m) => m[1]!);
    for (const n of names) {
      const external = n.startsWith('AWS_') || n === 'NVIDIA_DRIVER_CAPABILITIES';
      assert.ok(readByProcesses.has(n) || external, `${t}: ${n} is read by no process`);
    }
  }
});
