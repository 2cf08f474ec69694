/**
 * The device lock's Redis goes away under a running job. A job process (the real job-runner.ts,
 * with a real engine, forked by the daemon's JobSupervisor) used to crash within half a second of
 * any Redis restart (`MaxRetriesPerRequestError`, exit 2), which the daemon reported `crashed`:
 * an attempt used, and three Redis restarts failed an accepted job. Now a blip is ridden out (Redis
 * back empty: the job takes its devices back and runs on), and an outage longer than the lock
 * allows stops the run as `lost_contact`, which the control plane refunds and resumes from the last
 * checkpoint (common/jobs/refund-lost-run.ts, test/e2e/api-outage.test.ts). The Redis here is a
 * private redis-server (no persistence, as in production) under a temporary folder, killed and
 * started again on the same port.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { createLogger } from '../../common/logger.js';
import { jobSpecSchema } from '../../common/job-spec.js';
import { DeviceLockService } from '../../common/device-lock/index.js';
import type { Assignment } from '../control-plane-client.js';
import { JobSupervisor } from '../job-supervisor.js';
import type { OutboxReport, ReportOutbox } from '../report-outbox.js';
import { PrivateRedis } from '../../test/helpers/private-redis.js';

const LEASE_MS = 1500;
const jobId = '5d4c3b2a-1f0e-4d9c-8b7a-0123456789ab';
const nodeId = '6e5d4c3b-2a1f-4e0d-9c8b-0123456789ab';
const spec = jobSpecSchema.parse({
  name: 'lock-outage',
  workflow: {
    model: { preset: 'micro' },
    task: { name: 'addition', digits: 1 },
    steps: 100_000,
    promptsPerStep: 4,
    groupSize: 2,
    checkpointEvery: 100_000,
    evalEvery: 100_000,
    warmup: { maxSteps: 0, targetAccuracy: 0.3 },
  },
});
const assignment = (queueSeq: number): Assignment =>
  ({
    jobId,
    tenantId: '11111111-2222-4333-8444-555555555555',
    status: 'placed',
    spec,
    placement: {
      nodeId,
      devices: [0],
      mode: 'temporal',
      stages: { generate: [0], train: [0] },
      threadsPerDevice: 1,
      memoryBytes: 256 * 2 ** 20,
    },
    attempts: 0,
    maxAttempts: 3,
    priority: 0,
    queueSeq,
    resumeFrom: null,
    preemptRequestedAt: null,
  }) as Assignment;

let dir = '';
let redis: PrivateRedis;
let supervisor: JobSupervisor;
const puts: OutboxReport[] = [];

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const steps = () => puts.filter((r) => r.kind === 'report' && r.body.metrics.length > 0).length;
const finishes = () => puts.filter((r) => r.kind === 'finish');

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'lock-outage-'));
  redis = await PrivateRedis.start();
  const outbox = {
    put: async (r: OutboxReport) => void puts.push(r),
    holdsFinish: () => false,
  } as unknown as ReportOutbox;
  supervisor = new JobSupervisor(outbox, createLogger('test', 'silent'), {
    nodeId,
    storage: { root: path.join(dir, 'checkpoints') },
    redisUrl: redis.url,
    lockPrefix: 'outage:lock',
    leaseMs: LEASE_MS,
    supervisionMs: 60_000,
    spareRunner: false,
  });
});
after(async () => {
  await supervisor.drain(5000);
  await redis.close();
  await rm(dir, { recursive: true, force: true });
});

/** A new prefix on a new Redis: nothing holds a device, so no grace (common/device-lock/README.md). */
async function declareFresh(): Promise<void> {
  const client = new Redis(redis.port, '127.0.0.1');
  const locks = new DeviceLockService(client, { prefix: 'outage:lock' });
  try {
    await locks.declareFresh();
  } finally {
    locks.close();
    client.disconnect();
  }
}

test(
  'a Redis restart under a running job is ridden out: the job takes its devices back and runs on',
  { timeout: 120_000 },
  async () => {
    await declareFresh();
    supervisor.reconcile([assignment(1)]);
    await until('a few steps', () => steps() >= 3);
    await redis.kill();
    await new Promise((r) => setTimeout(r, 400));
    // Back empty, as Redis without persistence comes back.
    await redis.restart();
    const before = steps();
    await until('steps after the restart', () => steps() >= before + 3 || finishes().length > 0);
    assert.deepEqual(
      finishes().map((f) => f.body.outcome),
      [],
      `the run ended: ${JSON.stringify(finishes()[0]?.body)}`,
    );
    assert.equal(supervisor.control(jobId, 'preempt', 1), true);
    await until('the run to end', () => finishes().length === 1 && supervisor.running.length === 0);
    assert.equal(finishes()[0]!.body.outcome, 'preempted');
  },
);

test(
  'Redis gone for longer than the lock allows: the run stops as lost_contact, not crashed',
  { timeout: 120_000 },
  async () => {
    puts.length = 0;
    await declareFresh();
    supervisor.reconcile([assignment(2)]);
    await until('a few steps', () => steps() >= 3);
    const stoppedAt = Date.now();
    await redis.kill();
    await until('the run to end', () => finishes().length === 1 && supervisor.running.length === 0, 30_000);
    const { body } = finishes()[0]!;
    assert.equal(body.queueSeq, 2);
    assert.equal(body.outcome, 'lost_contact', body.error ?? '');
    assert.match(body.error ?? '', /unreachable/);
    // It rode the outage out for as long as the lock allows (a lease at least), not half a second.
    assert.ok(Date.now() - stoppedAt >= LEASE_MS, `${Date.now() - stoppedAt} ms`);
  },
);
