/**
 * The README's CLI walkthrough against `npm start`: an admin creates a tenant, the tenant logs in,
 * a bad spec file is refused with its field, a job is submitted, `logs -f` follows it to the end,
 * and `checkpoints download` saves its newest checkpoint with the sha256 verified. A job too big
 * for the pool stays queued: `jobs get` says why, and the admin's `queue` lists it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { deleteKeys, testPrefix, testRedisUrl } from '../helpers/redis.js';
import { freePort } from '../helpers/processes.js';
import { launchLocal, type Launched } from '../helpers/npm-start.js';
import { waitFor } from '../helpers/cluster.js';
import { runCli } from '../cli/run-cli.js';

let db: TestDatabase;
let system: Launched;
const prefix = testPrefix();
const home = mkdtempSync(path.join(tmpdir(), 'timeshare-cli-start-'));
const adminKey = `tsa_${randomBytes(16).toString('hex')}`;
let env: Record<string, string>;

before(async () => {
  db = await createTestDatabase();
  system = await launchLocal({
    DATABASE_URL: db.url,
    REDIS_URL: testRedisUrl(),
    TIMESHARE_REDIS_PREFIX: prefix,
    TIMESHARE_STORAGE_ROOT: path.join(home, 'storage'),
    TIMESHARE_ADMIN_KEY: adminKey,
    TIMESHARE_JWT_SECRET: randomBytes(32).toString('hex'),
    TIMESHARE_VIRTUAL_DEVICES: '2',
    PORT: String(await freePort()),
  });
  // The CLI's config folder lives in the temp folder too.
  env = { XDG_CONFIG_HOME: path.join(home, 'config'), TIMESHARE_API_URL: system.url };
});
after(async () => {
  if (system) assert.equal(await system.interrupt(), 0, system.output());
  await db?.drop();
  await deleteKeys(prefix);
  rmSync(home, { recursive: true, force: true });
});

const ok = async (args: string[], extra: Record<string, string> = {}, timeoutMs?: number) => {
  const r = await runCli(args, { ...env, ...extra }, { timeoutMs });
  assert.equal(r.code, 0, `timeshare ${args.join(' ')}:\n${r.stderr}`);
  return r;
};
const asAdmin = { TIMESHARE_ADMIN_KEY: adminKey };

test('npm start, then the CLI: login → submit → logs -f → checkpoints download (sha256 verified)', async () => {
  const tenant = JSON.parse(
    (await ok(['--json', 'admin', 'tenants', 'create', 'walkthrough'], asAdmin)).stdout,
  );
  await ok(['login', '--api-key', tenant.apiKey]);

  const bad = path.join(home, 'bad.yaml');
  await writeFile(bad, 'name: bad\nworkflow:\n  task: { name: addition }\n  steps: -3\n');
  const refused = await runCli(['submit', bad], env);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /^error: invalid_request: .*\(field: workflow\.steps\)$/m);

  // Three devices on a pool of two: it waits, and says so.
  const big = path.join(home, 'big.yaml');
  await writeFile(big, 'name: too-big\nresources: { devices: 3 }\nworkflow:\n  task: { name: addition }\n');
  const bigId = JSON.parse((await ok(['--json', 'submit', big])).stdout).id as string;

  const spec = path.join(home, 'job.yaml');
  await writeFile(
    spec,
    [
      'name: walkthrough-run',
      'workflow:',
      '  model: { preset: micro }',
      '  task: { name: addition, digits: 1 }',
      '  steps: 4',
      '  promptsPerStep: 16',
      '  groupSize: 4',
      '  checkpointEvery: 2',
      '  warmup: { maxSteps: 40, targetAccuracy: 0.2 }',
    ].join('\n'),
  );
  const submitted = await ok(['submit', spec]);
  const id = /^job ([0-9a-f-]{36}) /.exec(submitted.stdout)?.[1];
  assert.ok(id, submitted.stdout);

  const logs = await ok(['logs', '-f', id], {}, 180_000);
  const lines = logs.stdout.trim().split('\n');
  assert.match(lines[0]!, /job\.queued/);
  assert.ok(lines.some((l) => /job\.running/.test(l)));
  assert.match(lines[lines.length - 1]!, /job\.succeeded +reason=steps_completed status=succeeded/);

  const checkpoints = JSON.parse((await ok(['--json', 'checkpoints', 'list', id])).stdout);
  const newest = checkpoints[checkpoints.length - 1];
  const file = path.join(home, 'model.safetensors');
  const dl = await ok(['checkpoints', 'download', id, '-o', file]);
  assert.match(dl.stdout, new RegExp(`sha256 ${newest.sha256} verified`));
  assert.equal(
    createHash('sha256')
      .update(await readFile(file))
      .digest('hex'),
    newest.sha256,
  );

  const waiting = await waitFor('a wait reason for the big job', async () => {
    const j = JSON.parse((await ok(['--json', 'jobs', 'get', bigId])).stdout);
    return j.waitReason ? j : null;
  });
  assert.equal(waiting.status, 'queued');
  // 3 devices on a node of 2: no node of the pool could hold it, and it says so.
  assert.equal(waiting.waitReason, 'unschedulable');
  const got = await ok(['jobs', 'get', bigId]);
  assert.match(got.stdout, /waiting for: a node that can hold it: .* \(unschedulable\)/);
  assert.match(got.stdout, /queue position: 1/);
  const queue = await ok(['queue', 'default'], asAdmin);
  assert.match(queue.stdout, new RegExp(`${bigId}.*too-big.*${waiting.waitReason}`));
  assert.match(queue.stdout, /1 queued in default/);
  await ok(['jobs', 'cancel', bigId]);
});
