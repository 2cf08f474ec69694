/**
 * `npm start` survives the crash of one of its processes: the launcher starts a crashed child again
 * (with backoff) and the running job keeps checkpointing through the new API. A launcher killed
 * outright (SIGKILL, so it cannot stop anything) leaves no child behind: each notices that its
 * parent is gone and stops, freeing the API's port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { deleteKeys, testPrefix, testRedisUrl } from '../helpers/redis.js';
import { freePort, repoRoot } from '../helpers/processes.js';
import { steadyJob, waitFor } from '../helpers/cluster.js';

let db: TestDatabase;
let port: number;
const prefix = testPrefix();
const data = mkdtempSync(path.join(tmpdir(), 'timeshare-launcher-'));
const adminKey = `tsa_${randomBytes(16).toString('hex')}`;
let launcher: ChildProcess | null = null;
let out = '';
/** Every pid the launcher said it started, to make sure none outlives the test. */
const pids = () => [...out.matchAll(/\[start\] [\w-]+ started \(pid (\d+)\)/g)].map((m) => Number(m[1]));
/** Running, not merely a zombie waiting for whoever adopted it to reap it. */
const alive = (pid: number) => {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
};

before(async () => {
  db = await createTestDatabase();
  port = await freePort();
});
after(async () => {
  if (launcher && launcher.exitCode === null) launcher.kill('SIGKILL');
  for (const pid of pids()) if (alive(pid)) process.kill(pid, 'SIGKILL');
  await db.drop();
  await deleteKeys(prefix);
  rmSync(data, { recursive: true, force: true });
});

async function call<T>(route: string, token: string, body?: unknown): Promise<T> {
  const res = await fetch(`http://127.0.0.1:${port}${route}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${route} → ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const portOpen = () =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

test(
  'a crashed API is started again and the job goes on; a SIGKILLed launcher leaves no process behind',
  { timeout: 240_000 },
  async () => {
    launcher = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'infra/local/start.ts')], {
      cwd: repoRoot,
      env: {
        ...process.env,
        DATABASE_URL: db.url,
        REDIS_URL: testRedisUrl(),
        TIMESHARE_REDIS_PREFIX: prefix,
        TIMESHARE_STORAGE_ROOT: path.join(data, 'checkpoints'),
        TIMESHARE_OUTBOX_DIR: path.join(data, 'outbox'),
        TIMESHARE_ADMIN_KEY: adminKey,
        TIMESHARE_JWT_SECRET: randomBytes(32).toString('hex'),
        TIMESHARE_RESTART_BACKOFF_MS: '200',
        HOST: '127.0.0.1',
        PORT: String(port),
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    launcher.stdout!.on('data', (d) => (out += d));
    launcher.stderr!.on('data', (d) => (out += d));
    await waitFor('npm start to be up', async () => {
      if (launcher!.exitCode !== null) throw new Error(`npm start exited early:\n${out}`);
      return out.includes('export TS=');
    });
    const tenant = await call<{ apiKey: string }>('/v1/tenants', adminKey, { name: 'survivor' });
    const { token } = await call<{ token: string }>('/v1/auth/token', '', { apiKey: tenant.apiKey });
    const { id: jobId } = await call<{ id: string }>('/v1/jobs', token, steadyJob('survivor', 60));
    const checkpoints = async () =>
      (await call<{ data: { step: number }[] }>(`/v1/jobs/${jobId}/checkpoints`, token)).data.map(
        (c) => c.step,
      );
    await waitFor('a first checkpoint', async () => (await checkpoints()).length > 0);

    const apiPid = Number(/\[start\] api started \(pid (\d+)\)/.exec(out)![1]);
    process.kill(apiPid, 'SIGKILL');
    await waitFor('the API to be started again', async () => {
      const restarted = [...out.matchAll(/\[start\] api started \(pid (\d+)\)/g)].length === 2;
      return (
        restarted &&
        (await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.ok,
          () => false,
        ))
      );
    });
    assert.match(out, /api exited \(SIGKILL\); restarting it/);
    const job = await waitFor('the job to finish', async () => {
      const j = await call<{ status: string }>(`/v1/jobs/${jobId}`, token);
      return ['succeeded', 'failed'].includes(j.status) ? j : null;
    });
    assert.equal(job.status, 'succeeded', out);
    assert.ok((await checkpoints()).includes(60), 'the last checkpoint is recorded');

    launcher.kill('SIGKILL');
    const children = pids();
    assert.equal(children.length, 6, 'api (twice), two schedulers, webhook dispatcher, worker');
    await waitFor(
      'every child of the killed launcher to stop',
      async () => children.every((p) => !alive(p)) && !(await portOpen()),
      45_000,
    );
  },
);
