/**
 * The Helm chart renders with its default values and with production-like ones, and every object it
 * renders is valid against the Kubernetes API schemas (no cluster needed). Also checks what the
 * chart promises: probes and resource requests everywhere, GPUs requested by the worker DaemonSet on
 * the nodes the values select, two schedulers, the API's HPA and PDB, secrets never in a ConfigMap,
 * extra variables for every service (config.extra) or for one component (<component>.extraEnv).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { helmBinary, helmTemplate } from './helm-binary.js';
import { parseManifests, validateManifest, type Manifest } from './validate.js';

const chart = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../timeshare');
const production = path.join(chart, 'ci', 'production-values.yaml');
const helm = helmBinary();

interface Container {
  name: string;
  image: string;
  resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
  livenessProbe?: unknown;
  readinessProbe?: unknown;
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
}
type PodSpec = { containers: Container[]; nodeSelector?: Record<string, string>; tolerations?: unknown[] };

const podSpec = (m: Manifest) => (m.spec as { template: { spec: PodSpec } }).template.spec;
const find = (ms: Manifest[], kind: string, suffix: string) => {
  const m = ms.find((x) => x.kind === kind && x.metadata.name.endsWith(suffix));
  assert.ok(m, `${kind} *${suffix} is rendered`);
  return m;
};

async function renderValid(values: string[], set: string[] = []): Promise<Manifest[]> {
  const manifests = parseManifests(helmTemplate(helm, chart, values, set));
  const problems = (await Promise.all(manifests.map(validateManifest))).flat();
  assert.deepEqual(problems, []);
  return manifests;
}

for (const [name, values] of [
  ['default', []],
  ['production-like', [production]],
] as const) {
  test(`the chart renders valid Kubernetes objects with ${name} values`, async () => {
    const ms = await renderValid([...values]);
    const kinds = new Set(ms.map((m) => m.kind));
    for (const k of ['Deployment', 'DaemonSet', 'Service', 'HorizontalPodAutoscaler', 'PodDisruptionBudget'])
      assert.ok(kinds.has(k), `renders a ${k}`);
    for (const k of ['ConfigMap', 'NetworkPolicy', 'Job']) assert.ok(kinds.has(k), `renders a ${k}`);

    for (const m of ms.filter((x) => x.kind === 'Deployment' || x.kind === 'DaemonSet')) {
      for (const c of podSpec(m).containers) {
        assert.ok(c.livenessProbe, `${m.metadata.name}/${c.name} has a liveness probe`);
        assert.ok(c.resources?.requests?.cpu && c.resources.requests.memory, `${c.name} requests resources`);
        assert.ok(c.envFrom?.length, `${c.name} reads the ConfigMap and the Secret`);
      }
    }
    const scheduler = find(ms, 'Deployment', '-scheduler');
    assert.equal((scheduler.spec as { replicas: number }).replicas, 2);

    const worker = podSpec(find(ms, 'DaemonSet', '-worker-node'));
    assert.equal(worker.containers[0]!.resources?.limits?.['nvidia.com/gpu'], 8);
    assert.ok(worker.nodeSelector && Object.keys(worker.nodeSelector).length, 'workers go to GPU nodes');
    assert.ok(worker.tolerations?.length, 'workers tolerate the GPU taint');
    // A node scaled in drains (SIGTERM): the drain and the outbox flush after it (10 s) must end
    // before the kubelet's SIGKILL, or the jobs' last checkpoints are lost.
    const env = (worker.containers[0] as unknown as { env: { name: string; value?: string }[] }).env;
    const drainMs = Number(env.find((e) => e.name === 'TIMESHARE_DRAIN_TIMEOUT_MS')?.value);
    const grace = (worker as unknown as { terminationGracePeriodSeconds: number })
      .terminationGracePeriodSeconds;
    assert.ok(drainMs > 0 && drainMs / 1000 + 10 < grace, `drain ${drainMs} ms within a ${grace} s grace`);

    const config = find(ms, 'ConfigMap', '');
    assert.doesNotMatch(JSON.stringify(config), /ADMIN_KEY|JWT_SECRET|DATABASE_URL|postgresql:/);
  });
}

test('helm lint --strict passes with both values files', () => {
  for (const values of [[], ['--values', production]]) {
    const r = spawnSync(helm, ['lint', '--strict', chart, ...values], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
  }
});

test('secrets: generated when not given, absent when an existing Secret is named', async () => {
  const own = (await renderValid([])).filter((m) => m.kind === 'Secret');
  assert.equal(own.length, 1);
  const data = own[0]!.stringData as Record<string, string>;
  assert.match(data.TIMESHARE_ADMIN_KEY!, /^tsa_\w{40}$/);
  assert.ok(data.TIMESHARE_JWT_SECRET!.length >= 32);
  assert.equal((await renderValid([production])).filter((m) => m.kind === 'Secret').length, 0);
});

test('virtual devices: a CPU pool requests no GPU', async () => {
  const ms = await renderValid(
    [],
    ['worker.virtualDevices=2', 'worker.nodeSelector=null', 'worker.tolerations=null'],
  );
  const c = podSpec(find(ms, 'DaemonSet', '-worker-node')).containers[0]!;
  assert.equal(c.resources?.limits?.['nvidia.com/gpu'], undefined);
  assert.deepEqual((c as unknown as { args: string[] }).args, ['--virtual-devices', '2']);
});

test('config.extra: any other variable reaches every service, but not one the chart sets or a secret', async () => {
  const ms = await renderValid(
    [],
    ['config.extra.TIMESHARE_PREEMPTION=off', 'config.extra.TIMESHARE_MIN_RUN_SECONDS=120'],
  );
  const data = find(ms, 'ConfigMap', '').data as Record<string, string>;
  assert.equal(data.TIMESHARE_PREEMPTION, 'off');
  assert.equal(data.TIMESHARE_MIN_RUN_SECONDS, '120', 'a number is written as the string a variable is');
  for (const [set, why] of [
    ['config.extra.TIMESHARE_MAX_JOBS_PER_DEVICE=2', /the chart sets TIMESHARE_MAX_JOBS_PER_DEVICE itself/],
    ['config.extra.TIMESHARE_S3_BUCKET=b', /the chart sets TIMESHARE_S3_BUCKET itself/],
    [
      'config.extra.TIMESHARE_JWT_SECRET=x',
      /a secret, not for a ConfigMap or a pod spec; use secrets\.jwtSecret/,
    ],
  ] as const)
    assert.throws(() => helmTemplate(helm, chart, [], [set]), why);
});

/** Each component's values key and the workload running it. */
const components = {
  api: ['Deployment', '-api'],
  scheduler: ['Deployment', '-scheduler'],
  webhooks: ['Deployment', '-webhooks'],
  worker: ['DaemonSet', '-worker-node'],
} as const;
type Component = keyof typeof components;
const workload = (ms: Manifest[], c: Component) => find(ms, components[c][0], components[c][1]);
const container = (ms: Manifest[], c: Component) => podSpec(workload(ms, c)).containers[0]!;
const envOf = (c: Container) => new Map((c.env ?? []).map((e) => [e.name, e.value]));

/** A values file with `text`, for what --set cannot say (a YAML number, a null). */
function withValuesFile<T>(text: string, fn: (file: string) => T): T {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'timeshare-values-'));
  try {
    const file = path.join(dir, 'values.yaml');
    writeFileSync(file, text);
    return fn(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("extraEnv: a component's variable reaches that component's container and no other", async () => {
  const own: Record<Component, [string, string]> = {
    api: ['TIMESHARE_RATE_LIMIT_PER_SECOND', '500'],
    scheduler: ['TIMESHARE_ROUND_INTERVAL_MS', '500'],
    webhooks: ['TIMESHARE_WEBHOOK_CONCURRENCY', '64'],
    worker: ['TIMESHARE_HEARTBEAT_MS', '3000'],
  };
  const ms = await renderValid(
    [],
    Object.entries(own).map(([c, [name, value]]) => `${c}.extraEnv.${name}=${value}`),
  );
  const workloads = ms.filter((m) => ['Deployment', 'DaemonSet', 'Job'].includes(m.kind));
  assert.equal(workloads.length, 5, 'four components and the migrations Job');
  for (const [c, [name, value]] of Object.entries(own) as [Component, [string, string]][]) {
    assert.equal(envOf(container(ms, c)).get(name), value, `${c} has ${name}, as a string`);
    for (const m of workloads) {
      if (m === workload(ms, c)) continue;
      for (const other of podSpec(m).containers)
        assert.ok(!envOf(other).has(name), `${name} is not in ${m.metadata.name}/${other.name}`);
    }
    assert.ok(!(name in (find(ms, 'ConfigMap', '').data as object)), `${name} is not in the ConfigMap`);
  }
  // Without extraEnv the webhooks container has no env at all (its variables come from envFrom).
  assert.equal(container(await renderValid([]), 'webhooks').env, undefined);

  // YAML reads 3600000 as a number (Helm: a float, printed 3.6e+06 unless the chart takes care); a
  // null leaves the variable out, as Helm's null unsets a value.
  const fromFile = await withValuesFile(
    [
      'config: { extra: { TIMESHARE_WEBHOOK_RETRY_BASE_MS: 2000000, TIMESHARE_BALANCER: null } }',
      'webhooks: { extraEnv: { TIMESHARE_WEBHOOK_RETRY_MAX_MS: 3600000, TIMESHARE_WEBHOOK_ALLOW_PRIVATE: false } }',
      'worker: { extraEnv: { TIMESHARE_SPARE_RUNNER: null } }',
    ].join('\n'),
    (file) => renderValid([file]),
  );
  const data = find(fromFile, 'ConfigMap', '').data as Record<string, string>;
  assert.equal(data.TIMESHARE_WEBHOOK_RETRY_BASE_MS, '2000000');
  assert.ok(!('TIMESHARE_BALANCER' in data));
  const webhooks = envOf(container(fromFile, 'webhooks'));
  assert.equal(webhooks.get('TIMESHARE_WEBHOOK_RETRY_MAX_MS'), '3600000');
  assert.equal(webhooks.get('TIMESHARE_WEBHOOK_ALLOW_PRIVATE'), 'false');
  assert.ok(!envOf(container(fromFile, 'worker')).has('TIMESHARE_SPARE_RUNNER'));
});

test('extraEnv: a name the chart sets itself or a secret fails the render, naming what to use', () => {
  for (const [set, why] of [
    [
      'api.extraEnv.TIMESHARE_API_WORKERS=4',
      /api\.extraEnv\.TIMESHARE_API_WORKERS: the chart sets TIMESHARE_API_WORKERS itself; use api\.workers instead/,
    ],
    ['api.extraEnv.PORT=9000', /the chart sets PORT itself; use api\.port instead/],
    ['scheduler.extraEnv.TIMESHARE_METRICS_PORT=1', /use scheduler\.metricsPort instead/],
    ['worker.extraEnv.TIMESHARE_METRICS_PORT=1', /use worker\.metricsPort instead/],
    ['worker.extraEnv.TIMESHARE_POOL=a100', /worker\.extraEnv\.TIMESHARE_POOL: .*use worker\.pool instead/],
    ['worker.extraEnv.TIMESHARE_DRAIN_TIMEOUT_MS=1', /use worker\.terminationGracePeriodSeconds instead/],
    ['webhooks.extraEnv.LOG_LEVEL=debug', /webhooks\.extraEnv\.LOG_LEVEL: .*use config\.logLevel instead/],
    ['scheduler.extraEnv.TIMESHARE_S3_REGION=x', /use objectStorage\.region instead/],
    ['api.extraEnv.TIMESHARE_S3_ANYTHING=x', /the chart sets the TIMESHARE_S3_ variables itself/],
    ['api.extraEnv.DATABASE_URL=x', /api\.extraEnv\.DATABASE_URL: a secret, .*use secrets\.databaseUrl/],
    [
      'worker.extraEnv.TIMESHARE_NODE_KEY=x',
      /worker\.extraEnv\.TIMESHARE_NODE_KEY: a secret, .*secrets\.nodeKey/,
    ],
    ['webhooks.extraEnv.AWS_SECRET_ACCESS_KEY=x', /a secret, .*secrets\.s3SecretAccessKey/],
    [
      'api.extraEnv.TIMESHARE_BODY_LIMIT.nested=1',
      /api\.extraEnv\.TIMESHARE_BODY_LIMIT: a string .*not a map/,
    ],
  ] as const)
    assert.throws(() => helmTemplate(helm, chart, [], [set]), why, set);

  // Whatever the chart puts in a container's env or in the ConfigMap is refused there: the refusal
  // lists cannot fall behind the templates.
  const ms = parseManifests(helmTemplate(helm, chart, []));
  for (const c of Object.keys(components) as Component[])
    for (const name of envOf(container(ms, c)).keys())
      assert.throws(
        () => helmTemplate(helm, chart, [], [`${c}.extraEnv.${name}=x`]),
        new RegExp(`the chart sets ${name} itself`),
        `${c}.extraEnv.${name}`,
      );
  // config.extra reaches every container, so a name any container sets in its env (which would win
  // there, silently) is refused there too, naming the container and the value to use.
  for (const c of Object.keys(components) as Component[])
    for (const name of envOf(container(ms, c)).keys())
      assert.throws(
        () => helmTemplate(helm, chart, [], [`config.extra.${name}=x`]),
        new RegExp(`config\\.extra\\.${name}: the chart sets ${name} itself; .*the ${c} container's`),
        `config.extra.${name}`,
      );
  assert.throws(
    () => helmTemplate(helm, chart, [], ['config.extra.TIMESHARE_METRICS_PORT=1']),
    /use scheduler\.metricsPort instead \(the scheduler container's\); use worker\.metricsPort instead \(the worker container's\)/,
  );
  const where = ['config.extra', ...Object.keys(components).map((c) => `${c}.extraEnv`)];
  Object.keys(find(ms, 'ConfigMap', '').data as object).forEach((name, i) =>
    assert.throws(
      () => helmTemplate(helm, chart, [], [`${where[i % where.length]}.${name}=x`]),
      new RegExp(`the chart sets ${name} itself`),
      `${where[i % where.length]}.${name}`,
    ),
  );
});

test("extraEnv beside config.extra: both render, and the component's env entry wins in its container", async () => {
  const ms = await renderValid(
    [],
    ['config.extra.TIMESHARE_PREEMPTION=on', 'scheduler.extraEnv.TIMESHARE_PREEMPTION=off'],
  );
  const configMap = find(ms, 'ConfigMap', '');
  const data = configMap.data as Record<string, string>;
  assert.equal(data.TIMESHARE_PREEMPTION, 'on', 'config.extra stays in the ConfigMap for the others');
  // What a container's process sees, as Kubernetes builds it: envFrom's sources in order, then env,
  // each later one overriding an earlier one of the same name.
  const seen = (c: Container) => {
    const env = new Map<string, string | undefined>();
    for (const from of c.envFrom ?? [])
      if (from.configMapRef?.name === configMap.metadata.name)
        for (const [k, v] of Object.entries(data)) env.set(k, v);
    for (const [k, v] of envOf(c)) env.set(k, v);
    return env;
  };
  const scheduler = container(ms, 'scheduler');
  assert.equal(envOf(scheduler).get('TIMESHARE_PREEMPTION'), 'off', "the scheduler's env has its own value");
  assert.equal(seen(scheduler).get('TIMESHARE_PREEMPTION'), 'off');
  for (const c of ['api', 'webhooks', 'worker'] as const)
    assert.equal(seen(container(ms, c)).get('TIMESHARE_PREEMPTION'), 'on', `${c} keeps config.extra's`);
});

test('the validator rejects what the API server would', async () => {
  const bad = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'x' },
    spec: {
      selector: {},
      template: { spec: { containers: [{ name: 'a', image: 'b', ports: [{ containerPort: 'http' }] }] } },
    },
  };
  assert.match((await validateManifest(bad as Manifest)).join(), /containerPort must be integer/);
  assert.match(
    (await validateManifest({ ...bad, kind: 'Deploymnet' } as Manifest)).join(),
    /not a Kubernetes API kind/,
  );
});
