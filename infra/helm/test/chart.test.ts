/**
 * The Helm chart renders with its default values and with production-like ones, and every object it
 * renders is valid against the Kubernetes API schemas (no cluster needed). Also checks what the
 * chart promises: probes and resource requests everywhere, GPUs requested by the worker DaemonSet on
 * the nodes the values select, two schedulers, the API's HPA and PDB, secrets never in a ConfigMap.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
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
  envFrom?: unknown[];
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
    ['config.extra.TIMESHARE_JWT_SECRET=x', /a secret, not for a ConfigMap/],
  ] as const)
    assert.throws(() => helmTemplate(helm, chart, [], [set]), why);
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
