/**
 * The `timeshare` CLI against a whole system (API + scheduler + a worker daemon with the real
 * engine), run as a child process: login → submit → `logs -f` until done → metrics →
 * `checkpoints download` verified (and resumed from a partial file); token renewal; errors.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { runCli } from './run-cli.js';

let c: Cluster;
let home: string;
let env: Record<string, string>;
let apiKey: string;
before(async () => {
  c = await startCluster();
  await c.startWorker('cli-node', 1);
  home = await mkdtemp(path.join(tmpdir(), 'timeshare-cli-'));
  // The CLI's config folder and every file it writes live in this temp folder, deleted after.
  env = { XDG_CONFIG_HOME: path.join(home, 'config'), TIMESHARE_API_URL: c.h.api.url };
  const t = await c.h.createTenant('cli-tenant');
  apiKey = t.apiKey;
});
after(async () => {
  await c.close();
  await rm(home, { recursive: true, force: true });
});

const credentialsFile = () => path.join(home, 'config', 'timeshare', 'credentials.json');
const sha256 = async (file: string) =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex');

test(
  'login → submit → logs -f → metrics → checkpoints download (verified, resumed)',
  { timeout: 300_000 },
  async () => {
    const login = await runCli(['login', '--api-key', apiKey], env);
    assert.equal(login.code, 0, login.stderr);
    assert.match(login.stdout, /logged in to .* as tenant cli-tenant /);
    assert.equal((await stat(credentialsFile())).mode & 0o777, 0o600);

    const specFile = path.join(home, 'job.yaml');
    await writeFile(
      specFile,
      [
        'name: cli-run',
        'workflow:',
        '  model: { preset: micro }',
        '  task: { name: addition, digits: 1 }',
        '  steps: 4',
        '  promptsPerStep: 16',
        '  groupSize: 4',
        '  checkpointEvery: 2',
        '  evalEvery: 2',
        '  warmup: { maxSteps: 40, targetAccuracy: 0.2 }',
      ].join('\n'),
    );
    const human = await runCli(['submit', specFile, '--idempotency-key', 'cli-1'], env);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^job [0-9a-f-]{36} {2}cli-run {2}\w+/);
    // The same key and spec return the same job, here as JSON for a script.
    const submitted = await runCli(['--json', 'submit', specFile, '--idempotency-key', 'cli-1'], env);
    assert.equal(submitted.code, 0, submitted.stderr);
    const job = JSON.parse(submitted.stdout);
    assert.equal(human.stdout.split(/\s+/)[1], job.id);
    assert.ok('queuePosition' in job && 'estimatedStartAt' in job && 'waitReason' in job);

    const logs = await runCli(['logs', '-f', job.id], env, { timeoutMs: 240_000 });
    assert.equal(logs.code, 0, logs.stderr);
    const lines = logs.stdout.trim().split('\n');
    assert.match(lines[0]!, /job\.queued/);
    assert.match(lines[lines.length - 1]!, /job\.succeeded .*\bstatus=succeeded/);
    assert.ok(lines.some((l) => /job\.running/.test(l)));

    const got = JSON.parse((await runCli(['--json', 'jobs', 'get', job.id], env)).stdout);
    assert.equal(got.status, 'succeeded');
    // Its progress: the engine's real run reported each of its 4 steps.
    assert.deepEqual([got.progress.step, got.progress.steps, got.progress.estimatedFinishAt], [4, 4, null]);
    assert.match((await runCli(['jobs', 'get', job.id], env)).stdout, /progress: step 4 of 4\n/);
    const waited = await runCli(['jobs', 'wait', job.id], env);
    assert.equal(waited.code, 0, waited.stderr);

    const metrics = await runCli(['metrics', job.id], env);
    assert.equal(metrics.code, 0, metrics.stderr);
    assert.match(metrics.stdout, /reward_mean/);
    assert.match(metrics.stdout, /reward_mean [▁▂▃▄▅▆▇█]{4} /, 'a sparkline of 4 steps');

    const list = JSON.parse((await runCli(['--json', 'checkpoints', 'list', job.id], env)).stdout);
    assert.deepEqual(
      list.map((k: { step: number }) => k.step),
      [2, 4],
    );
    const latest = list[1];
    const out = path.join(home, 'latest.safetensors');
    const dl = await runCli(['checkpoints', 'download', job.id, '-o', out], env);
    assert.equal(dl.code, 0, dl.stderr);
    assert.match(dl.stdout, new RegExp(`sha256 ${latest.sha256} verified`));
    assert.equal(await sha256(out), latest.sha256);

    // Half a file left by an interrupted download of this checkpoint (its sidecar says so): the
    // next one asks only for the rest.
    const whole = await readFile(out);
    const resumedOut = path.join(home, 'resumed.safetensors');
    const half = Math.floor(whole.length / 2);
    const owner = JSON.stringify({ job: job.id, checkpoint: latest.id, sha256: latest.sha256 });
    await writeFile(`${resumedOut}.part`, whole.subarray(0, half));
    await writeFile(`${resumedOut}.part.json`, owner);
    const resumed = await runCli(['checkpoints', 'download', job.id, latest.id, '-o', resumedOut], env);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, new RegExp(`resumed from byte ${half}`));
    assert.equal(await sha256(resumedOut), latest.sha256);

    // A corrupt partial file fails the check, exits non-zero and is removed.
    const corrupt = path.join(home, 'corrupt.safetensors');
    await writeFile(`${corrupt}.part`, Buffer.alloc(half, 7));
    await writeFile(`${corrupt}.part.json`, owner);
    const bad = await runCli(['checkpoints', 'download', job.id, latest.id, '-o', corrupt], env);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /error: checksum_mismatch/);
    await assert.rejects(stat(`${corrupt}.part`));
    await assert.rejects(stat(`${corrupt}.part.json`));
    await assert.rejects(stat(corrupt));
  },
);

test('an expired token is renewed from the cached key and written back (mode 0600)', async () => {
  assert.equal((await runCli(['login', '--api-key', apiKey], env)).code, 0);
  const before = JSON.parse(await readFile(credentialsFile(), 'utf8'));
  await writeFile(
    credentialsFile(),
    JSON.stringify({ ...before, token: 'expired', expiresAt: new Date(Date.now() - 1000).toISOString() }),
    { mode: 0o600 },
  );
  const r = await runCli(['--json', 'usage'], env);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(JSON.parse(r.stdout).quota);
  const renewed = JSON.parse(await readFile(credentialsFile(), 'utf8'));
  assert.notEqual(renewed.token, 'expired');
  assert.ok(Date.parse(renewed.expiresAt) > Date.now());
  assert.equal((await stat(credentialsFile())).mode & 0o777, 0o600);
});

test('a bad spec file prints the field and the API code, and exits non-zero', async () => {
  const bad = path.join(home, 'bad.json');
  await writeFile(bad, JSON.stringify({ name: 'bad', workflow: { task: { name: 'chess' } } }));
  const r = await runCli(['submit', bad], env);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^error: invalid_request: workflow\.task\.name: .*\(field: workflow\.task\.name\)/m);
  const j = await runCli(['--json', 'submit', bad], env);
  assert.equal(j.code, 1);
  assert.equal(JSON.parse(j.stdout).error.param, 'workflow.task.name');

  const broken = path.join(home, 'broken.yaml');
  await writeFile(broken, 'name: [unclosed\n');
  const y = await runCli(['submit', broken], env);
  assert.equal(y.code, 1);
  assert.match(y.stderr, /error: invalid_file: .*broken\.yaml/);

  const missing = await runCli(['jobs', 'get', '00000000-0000-4000-8000-000000000000'], env);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /error: not_found: /);
});

test('admin commands: tenants, keys, quotas and nodes', async () => {
  const adminEnv = { ...env, TIMESHARE_ADMIN_KEY: c.h.adminKey };
  const created = JSON.parse(
    (await runCli(['--json', 'admin', 'tenants', 'create', 'cli-admin-made'], adminEnv)).stdout,
  );
  assert.equal(created.name, 'cli-admin-made');
  const set = await runCli(
    ['--json', 'admin', 'quota', 'set', 'cli-admin-made', '--max-active-jobs', '7'],
    adminEnv,
  );
  assert.equal(set.code, 0, set.stderr);
  assert.equal(JSON.parse(set.stdout).maxActiveJobs, 7);
  const weighed = await runCli(['admin', 'tenants', 'set', 'cli-admin-made', '--weight', '2.5'], adminEnv);
  assert.equal(weighed.code, 0, weighed.stderr);
  assert.match(weighed.stdout, /tenant cli-admin-made: weight 2\.5/);
  const key = JSON.parse((await runCli(['--json', 'admin', 'keys', 'create', created.id], adminEnv)).stdout);
  const revoke = await runCli(['admin', 'keys', 'revoke', 'cli-admin-made', key.id], adminEnv);
  assert.equal(revoke.code, 0, revoke.stderr);
  const nodes = await runCli(['admin', 'nodes', 'list'], adminEnv);
  assert.match(nodes.stdout, /cli-node/);
  // Without the admin key: the API's own answer.
  const denied = await runCli(['admin', 'tenants', 'list'], { ...env, TIMESHARE_ADMIN_KEY: 'x'.repeat(20) });
  assert.equal(denied.code, 1);
  assert.match(denied.stderr, /error: unauthorized: /);
});

test('webhooks: create (secret once), list, deliveries, delete; a private URL is refused with its field', async () => {
  const created = await runCli(
    ['--json', 'webhooks', 'create', 'https://93.184.216.34/hook', '--event', 'job.failed'],
    env,
  );
  assert.equal(created.code, 0, created.stderr);
  const ep = JSON.parse(created.stdout);
  assert.match(ep.secret, /^whsec_/);
  assert.deepEqual(ep.events, ['job.failed']);
  const list = await runCli(['webhooks', 'list'], env);
  assert.match(list.stdout, new RegExp(`${ep.id}.*job\\.failed`));
  assert.doesNotMatch(list.stdout, /whsec_/);
  const deliveries = await runCli(['--json', 'webhooks', 'deliveries', ep.id], env);
  assert.deepEqual(JSON.parse(deliveries.stdout), { data: [], nextCursor: null });
  assert.equal((await runCli(['webhooks', 'delete', ep.id], env)).code, 0);
  const refused = await runCli(['webhooks', 'create', 'http://127.0.0.1:9/hook'], env);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /error: invalid_request: url: .*private or loopback.*\(field: url\)/);
});

test('bash completion completes commands and subcommands', async () => {
  const script = (await runCli(['completion', 'bash'], env)).stdout;
  const complete = (words: string[]) =>
    execFileSync('bash', [
      '-c',
      `${script}\nCOMP_WORDS=(${words.map((w) => `"${w}"`).join(' ')}); COMP_CWORD=${words.length - 1}; _timeshare; echo "\${COMPREPLY[@]}"`,
    ])
      .toString()
      .trim()
      .split(' ');
  assert.deepEqual(complete(['timeshare', 'jo']), ['jobs']);
  const jobWords = complete(['timeshare', 'jobs', '']);
  for (const w of ['list', 'get', 'cancel', 'wait', '--json']) assert.ok(jobWords.includes(w), w);
  assert.ok(!jobWords.includes('submit'), 'only the words of `jobs`');
  assert.deepEqual(complete(['timeshare', 'checkpoints', 'd']), ['download']);
});
