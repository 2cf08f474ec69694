/**
 * A whole Timeshare on one machine for end-to-end tests: the API (in-process, real HTTP), the
 * scheduler and N worker daemons as real child processes, sharing one test database, one Redis
 * prefix and one storage root.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startHarness, type Harness } from './api-harness.js';
import { startProcess, type Proc } from './processes.js';

export interface Cluster {
  h: Harness;
  scheduler: Proc;
  workers: Map<string, Proc>;
  env: Record<string, string>;
  /** A small pool on the cluster's database, for what a test checks or sets up behind the API. */
  sql: pg.Pool;
  startWorker(
    name: string,
    devices: number,
    extra?: { deviceMemory?: number; threads?: number; pool?: string; env?: Record<string, string> },
  ): Promise<Proc>;
  /** Where worker `name` keeps the reports the API could not take yet (worker-node/report-outbox.ts). */
  outboxOf(name: string): string;
  close(): Promise<void>;
}

export async function startCluster(
  opts: {
    nodeTimeoutMs?: number;
    maxJobsPerDevice?: number;
    env?: Record<string, string>;
    /** For the scheduler process only (e.g. its metrics port). */
    schedulerEnv?: Record<string, string>;
  } = {},
): Promise<Cluster> {
  const h = await startHarness(opts.env ?? {});
  const env: Record<string, string> = {
    DATABASE_URL: h.config.DATABASE_URL,
    REDIS_URL: h.config.REDIS_URL,
    TIMESHARE_REDIS_PREFIX: h.config.TIMESHARE_REDIS_PREFIX,
    TIMESHARE_STORAGE_ROOT: h.config.TIMESHARE_STORAGE_ROOT,
    TIMESHARE_API_URL: h.api.url,
    TIMESHARE_NODE_TIMEOUT_MS: String(opts.nodeTimeoutMs ?? 3000),
    TIMESHARE_MAX_JOBS_PER_DEVICE: String(opts.maxJobsPerDevice ?? 2),
    TIMESHARE_ROUND_INTERVAL_MS: '250',
    TIMESHARE_HEARTBEAT_MS: '500',
    TIMESHARE_ASSIGNMENT_POLL_MS: '500',
    TIMESHARE_LEASE_MS: '3000',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    ...opts.env,
  };
  const scheduler = startProcess('scheduler/main.ts', { ...env, ...opts.schedulerEnv });
  const workers = new Map<string, Proc>();
  // Each worker's outbox (worker-node/report-outbox.ts), deleted with the cluster.
  const outboxes = mkdtempSync(path.join(os.tmpdir(), 'timeshare-outbox-'));
  const sql = new pg.Pool({ connectionString: env.DATABASE_URL, max: 2 });
  // pg-pool's end() resolves before its clients' sockets have closed, and the database is then
  // dropped WITH (FORCE): a connection still closing is terminated (57P01), an error of the
  // cleanup, not of the test (uncaught, it failed test/e2e/node-timeout-outage.test.ts once).
  sql.on('error', (err: Error & { code?: string }) => {
    if (err.code !== '57P01') throw err;
  });
  return {
    h,
    scheduler,
    workers,
    env,
    sql,
    async startWorker(name, devices, extra = {}) {
      const key = await h.admin(h.http.post('/v1/node-keys')).send({ name }).expect(201);
      const w = startProcess(
        'worker-node/main.ts',
        {
          ...env,
          TIMESHARE_NODE_KEY: key.body.apiKey,
          TIMESHARE_NODE_NAME: name,
          TIMESHARE_OUTBOX_DIR: path.join(outboxes, name),
          ...(extra.pool ? { TIMESHARE_POOL: extra.pool } : {}),
          ...extra.env,
        },
        [],
        [
          '--virtual-devices',
          String(devices),
          '--device-memory',
          String(extra.deviceMemory ?? 256 * 1024 * 1024),
          '--threads-per-device',
          String(extra.threads ?? 1),
        ],
      );
      workers.set(name, w);
      // Registered once the node shows up.
      for (let i = 0; i < 200; i++) {
        const nodes = await h.admin(h.http.get('/v1/nodes')).expect(200);
        if (
          nodes.body.data.some(
            (n: { name: string; status: string }) => n.name === name && n.status === 'ready',
          )
        )
          return w;
        if (w.child.exitCode !== null) throw new Error(`worker ${name} exited:\n${w.output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`worker ${name} did not register:\n${w.output()}`);
    },
    outboxOf: (name) => path.join(outboxes, name),
    async close() {
      await Promise.all([...workers.values()].map((w) => w.kill('SIGKILL')));
      await scheduler.kill('SIGTERM');
      await sql.end();
      await h.close();
      rmSync(outboxes, { recursive: true, force: true });
    },
  };
}

export async function waitFor<T>(
  what: string,
  fn: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  timeoutMs = 120_000,
  pollMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/**
 * The records waiting in worker `name`'s outbox, oldest first, as their JSON text. A record being
 * written (`.tmp`) or delivered meanwhile is skipped.
 */
export function outboxRecords(c: Cluster, name: string): string[] {
  const dir = c.outboxOf(name);
  const texts: string[] = [];
  for (const f of readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .sort()) {
    try {
      texts.push(readFileSync(path.join(dir, f), 'utf8'));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  return texts;
}

export interface JobView {
  id: string;
  status: string;
  attempts: number;
  countedAttempts: number;
  error: string | null;
  waitReason: string | null;
}

export type Tenantish = { as: (r: import('supertest').Test) => import('supertest').Test };

export async function jobOf(c: Cluster, t: Tenantish, id: string): Promise<JobView> {
  return (await t.as(c.h.http.get(`/v1/jobs/${id}`)).expect(200)).body;
}

export async function waitForStatus(
  c: Cluster,
  t: Tenantish,
  id: string,
  statuses: string[],
  timeoutMs = 180_000,
) {
  return waitFor(
    `job ${id} in ${statuses.join('|')}`,
    async () => {
      const j = await jobOf(c, t, id);
      return statuses.includes(j.status) ? j : null;
    },
    timeoutMs,
  );
}

export async function checkpointSteps(c: Cluster, t: Tenantish, id: string): Promise<number[]> {
  const r = await t.as(c.h.http.get(`/v1/jobs/${id}/checkpoints`)).expect(200);
  return r.body.data.map((k: { step: number }) => k.step);
}

/**
 * The step of the last checkpoint recorded before the job's first event of `type`. Read from the
 * event log rather than the checkpoint list: a resumed run can checkpoint again before a test
 * gets to read the list.
 */
export function checkpointStepBefore(
  events: { type: string; data: Record<string, unknown> }[],
  type: string,
) {
  const at = events.findIndex((e) => e.type === type);
  assert.ok(at >= 0, `no ${type} event in ${events.map((e) => e.type).join(', ')}`);
  const saved = events.slice(0, at).filter((e) => e.type === 'job.checkpoint');
  assert.ok(saved.length > 0, `no checkpoint before ${type}`);
  return saved.at(-1)!.data.step as number;
}

export async function eventsOf(
  c: Cluster,
  t: Tenantish,
  id: string,
): Promise<{ type: string; data: Record<string, unknown> }[]> {
  return (await t.as(c.h.http.get(`/v1/jobs/${id}/events?limit=1000`)).expect(200)).body.data;
}

/** A job slow enough (~0.1 s a step) to be interrupted mid-run, quick enough for CI. */
export const steadyJob = (name: string, steps: number, extra: Record<string, unknown> = {}) => ({
  name,
  workflow: {
    model: { preset: 'tiny' },
    task: { name: 'addition', digits: 1 },
    steps,
    promptsPerStep: 32,
    groupSize: 8,
    checkpointEvery: 5,
    evalEvery: 25,
    warmup: { maxSteps: 100, targetAccuracy: 0.3 },
    ...extra,
  },
});

/** A cluster's environment for preemption tests: a job may be preempted a second after it starts, and has 15 s to checkpoint. */
export const QUICK_PREEMPTION_ENV = { TIMESHARE_MIN_RUN_SECONDS: '1', TIMESHARE_PREEMPT_GRACE_SECONDS: '15' };

/**
 * A cluster's environment under which the worker emulates devices whose speed adds up (test-only,
 * worker-node/emulated-devices.ts), generation the heavier side, for jobs named `rebalance`: what
 * makes the reactive balancer move a device on a machine whose shared cores cannot show it.
 */
export const GENERATION_BOUND_ENV = { TIMESHARE_TEST_DEVICE_WORK: '480:60:rebalance' };

/** A spatial job on 4 devices that `GENERATION_BOUND_ENV` makes generation-bound. */
export const generationBoundJob = (steps: number, checkpointEvery: number) => ({
  name: 'rebalance',
  resources: { devices: 4 },
  workflow: {
    mode: 'spatial',
    maxWeightLag: 1,
    model: { preset: 'micro' },
    task: { name: 'addition', digits: 1 },
    steps,
    promptsPerStep: 8,
    groupSize: 4,
    checkpointEvery,
    evalEvery: 1000,
    warmup: { maxSteps: 0 },
  },
});
