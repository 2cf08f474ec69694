/**
 * `npm run test:deploy`: the compose stack, end to end, on real containers (not part of `npm test`:
 * it builds images and needs a Docker engine). Brings the stack up, submits a job through the API,
 * waits for success, downloads its checkpoint and checks the sha256; then, mid-run of a second job,
 * kills one scheduler container and the worker container running it, and sees the job finish on the
 * survivors from its last checkpoint. Prints the timings. Tears the stack down at the end
 * (TIMESHARE_SMOKE_KEEP=1 leaves it up).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { exportedNames, unknownReferences } from '../../common/metrics/references.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const composeFile = path.join(root, 'infra/compose/docker-compose.yml');
const project = 'timeshare-smoke';
const port = process.env.TIMESHARE_COMPOSE_API_PORT ?? '18080';
const api = `http://127.0.0.1:${port}`;
const adminKey = process.env.TIMESHARE_ADMIN_KEY ?? 'tsa_compose_local_admin_key_0123456789';
const images = ['api', 'scheduler', 'worker-node'].map((p) => `timeshare/${p}:local`);
const timings: [string, number][] = [];
const t0 = Date.now();

const say = (msg: string) => console.log(`[smoke ${((Date.now() - t0) / 1000).toFixed(1)} s] ${msg}`);
const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { cwd: root, encoding: 'utf8' }).trim();

function composeCommand(): string[] {
  if (spawnSync('docker', ['compose', 'version']).status === 0) return ['docker', 'compose'];
  if (spawnSync('docker-compose', ['version']).status !== 0) {
    say("installing Debian's docker-compose (no compose on this machine)");
    sh('apt-get', ['install', '-y', '--no-install-recommends', 'docker-compose']);
  }
  return ['docker-compose'];
}
let composeCmd: string[] = [];
const compose = (...args: string[]) =>
  sh(composeCmd[0]!, [...composeCmd.slice(1), '-p', project, '-f', composeFile, ...args]);

async function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const start = Date.now();
  const out = await fn();
  timings.push([label, (Date.now() - start) / 1000]);
  say(`${label}: ${((Date.now() - start) / 1000).toFixed(1)} s`);
  return out;
}

async function waitFor<T>(what: string, fn: () => Promise<T | null>, timeoutMs = 300_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON of several shapes; the asserts check it
async function call(method: string, url: string, auth: string, body?: unknown): Promise<any> {
  const res = await fetch(`${api}${url}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...(auth ? { Authorization: `Bearer ${auth}` } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

const job = (name: string, steps: number) => ({
  name,
  workflow: {
    model: { preset: 'tiny' },
    task: { name: 'addition', digits: 1 },
    steps,
    promptsPerStep: 32,
    groupSize: 8,
    checkpointEvery: 5,
    warmup: { maxSteps: 100, targetAccuracy: 0.3 },
  },
});

async function main(): Promise<void> {
  sh(path.join(root, 'infra/docker/engine.sh'), []);
  const missing = images.filter((i) => spawnSync('docker', ['image', 'inspect', i]).status !== 0);
  if (missing.length) {
    say(`building the images first (${missing.join(', ')} missing)`);
    execFileSync(path.join(root, 'infra/docker/build-images.sh'), { stdio: 'inherit' });
  }
  composeCmd = composeCommand();

  await timed('compose up until the API is ready and 2 workers registered', async () => {
    compose('up', '-d');
    await waitFor('API ready', async () => ((await fetch(`${api}/readyz`)).ok ? true : null));
    await waitFor('two ready nodes', async () => {
      const nodes = (await call('GET', '/v1/nodes', adminKey)).data as { status: string }[];
      return nodes.filter((n) => n.status === 'ready').length >= 2 ? true : null;
    });
  });

  const tenant = await call('POST', '/v1/tenants', adminKey, { name: `smoke-${Date.now()}` });
  const { token } = await call('POST', '/v1/auth/token', '', { apiKey: tenant.apiKey });
  const waitStatus = (id: string, statuses: string[]) =>
    waitFor(`job ${id} ${statuses.join('|')}`, async () => {
      const j = await call('GET', `/v1/jobs/${id}`, token);
      return statuses.includes(j.status) ? j : null;
    });

  // 1. A job from submission to success, then its checkpoint, byte for byte.
  const first = await call('POST', '/v1/jobs', token, job('smoke-first', 20));
  const done = await timed('job 1: submit → succeeded', () => waitStatus(first.id, ['succeeded', 'failed']));
  assert.equal(done.status, 'succeeded', done.error ?? '');
  const checkpoints = (await call('GET', `/v1/jobs/${first.id}/checkpoints`, token)).data as {
    id: string;
    step: number;
    sha256: string;
  }[];
  const last = checkpoints.at(-1)!;
  const content = await timed('job 1: checkpoint download', async () => {
    const res = await fetch(`${api}/v1/jobs/${first.id}/checkpoints/${last.id}/content`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.equal(res.status, 200);
    return Buffer.from(await res.arrayBuffer());
  });
  assert.equal(createHash('sha256').update(content).digest('hex'), last.sha256);
  say(`checkpoint step ${last.step}: ${content.length} bytes, sha256 matches`);

  // Each container's own /metrics, read from inside it (only the API's port is published).
  const scrape = (service: string, port: number) =>
    compose(
      'exec',
      '-T',
      service,
      'node',
      '-e',
      `fetch('http://127.0.0.1:${port}/metrics').then((r) => r.text()).then((t) => process.stdout.write(t))`,
    );

  // 2. Kill the leading scheduler and the worker running a job mid-run; the job finishes anyway.
  const second = await call('POST', '/v1/jobs', token, job('smoke-survivor', 120));
  await waitFor('job 2 running with a checkpoint', async () => {
    const ks = (await call('GET', `/v1/jobs/${second.id}/checkpoints`, token)).data as unknown[];
    return ks.length >= 1 ? true : null;
  });
  const node = compose(
    'exec',
    '-T',
    'postgres',
    'psql',
    '-U',
    'postgres',
    '-d',
    'timeshare',
    '-tAc',
    `SELECT n.name FROM jobs j JOIN nodes n ON n.id = j.node_id WHERE j.id = '${second.id}'`,
  );
  assert.match(node, /^worker-[ab]$/, `job 2 runs on ${node}`);
  const leaders = ['scheduler-a', 'scheduler-b'].filter((s) =>
    /^timeshare_scheduler_leader 1$/m.test(scrape(s, 9464)),
  );
  assert.equal(leaders.length, 1, `one scheduler leads (${leaders.join(', ') || 'none'})`);
  const leader = leaders[0]!;
  const killedAt = Date.now();
  compose('kill', leader, node);
  say(`killed ${leader} (the leader) and ${node} (the worker running job 2)`);
  const runningEvents = async () =>
    ((await call('GET', `/v1/jobs/${second.id}/events?limit=1000`, token)).data as { type: string }[]).filter(
      (e) => e.type === 'job.running',
    ).length;
  await waitFor('job 2 running again', async () => ((await runningEvents()) >= 2 ? true : null));
  timings.push(['job 2: kill → running again on the other worker', (Date.now() - killedAt) / 1000]);
  const survived = await waitStatus(second.id, ['succeeded', 'failed']);
  timings.push(['job 2: kill → succeeded on the survivors', (Date.now() - killedAt) / 1000]);
  assert.equal(survived.status, 'succeeded', survived.error ?? '');
  const events = (await call('GET', `/v1/jobs/${second.id}/events?limit=1000`, token)).data as {
    type: string;
    data: Record<string, unknown>;
  }[];
  const runs = events.filter((e) => e.type === 'job.running');
  const resumed = runs.at(-1)?.data.resumedFromStep as number | null;
  assert.ok(runs.length >= 2 && resumed && resumed > 0, `job 2 resumed from a checkpoint (${resumed})`);
  say(`job 2 resumed from step ${resumed} after the kill and succeeded`);

  // 3. Every metric the dashboard and the alerts use is served by the running processes.
  // From the survivors: Docker does not restart a container killed through its API.
  const texts = [
    await (await fetch(`${api}/metrics`)).text(),
    scrape(leader === 'scheduler-a' ? 'scheduler-b' : 'scheduler-a', 9464),
    scrape(node === 'worker-a' ? 'worker-b' : 'worker-a', 9465),
  ];
  const served = new Set(texts.flatMap((t) => [...exportedNames(t)]));
  assert.deepEqual(unknownReferences(root, served), []);
  const line = (name: string) =>
    texts
      .join('\n')
      .split('\n')
      .find((l) => l.startsWith(name)) ?? `${name} (none)`;
  say(
    `${served.size} metric names served; e.g. ${line('timeshare_jobs{')}, ${line('timeshare_engine_step_seconds_count')}`,
  );

  console.log('\ntimings (s):');
  for (const [label, s] of timings) console.log(`  ${s.toFixed(1).padStart(6)}  ${label}`);
  const sizes = sh('docker', ['image', 'ls', '--format', '{{.Repository}}:{{.Tag}} {{.Size}}']);
  console.log(
    `\nimages:\n${sizes
      .split('\n')
      .filter((l) => l.startsWith('timeshare/'))
      .map((l) => `  ${l}`)
      .join('\n')}`,
  );
}

main()
  .then(() => say('passed'))
  .catch((err) => {
    console.error(err);
    if (composeCmd.length) console.error(compose('logs', '--tail', '40'));
    process.exitCode = 1;
  })
  .finally(() => {
    if (composeCmd.length && process.env.TIMESHARE_SMOKE_KEEP !== '1') {
      say('compose down');
      compose('down', '-v', '--remove-orphans');
    }
  });
