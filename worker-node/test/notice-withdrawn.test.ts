/**
 * A preemption notice the scheduler withdrew (scheduler/core/withdraw.ts) reaches the job process
 * through the node's assignment: once an assignment carried the notice and a later one of the same
 * run does not, the daemon tells the job to run on. An admin's preemption comes by Redis alone (no
 * notice on the row): an assignment without a notice then withdraws nothing. The job process is a
 * stand-in that echoes what it is sent; the stage loop's side is stage-loop-withdraw.test.ts.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createLogger } from '../../common/logger.js';
import type { Assignment } from '../control-plane-client.js';
import { JobSupervisor } from '../job-supervisor.js';
import type { RunnerToDaemon } from '../messages.js';
import type { ReportOutbox } from '../report-outbox.js';

// Each request it is sent comes back as a metric named after it; it exits on cancel only.
const STAND_IN = `
process.on('message', (m) => {
  if (m.t === 'start') return process.send({ t: 'started', resumedFromStep: null });
  if (m.t === 'alive') return;
  process.send({ t: 'report', metrics: [{ step: 0, name: 'got:' + m.t, value: 0 }], profiles: [], deviceSeconds: 0 });
  if (m.t === 'cancel') process.send({ t: 'cancelled' }, () => process.exit(0));
});`;

const nodeId = '0a1b2c3d-4e5f-4a6b-8c7d-0123456789ab';
const assignment = (jobId: string, status: 'placed' | 'running', notice: boolean): Assignment =>
  ({
    jobId,
    tenantId: '11111111-2222-4333-8444-555555555555',
    status,
    spec: { name: 'stand-in', workflow: { task: { name: 'addition' } } },
    placement: {
      nodeId,
      devices: [0],
      mode: 'temporal',
      stages: { generate: [0], train: [0] },
      threadsPerDevice: 1,
      memoryBytes: 0,
    },
    attempts: 0,
    maxAttempts: 3,
    priority: 0,
    queueSeq: 1,
    resumeFrom: null,
    preemptRequestedAt: notice ? new Date().toISOString() : null,
  }) as Assignment;

const children: ChildProcess[] = [];
const got: string[] = [];
const supervisor = new JobSupervisor(
  { put: async () => undefined, holdsFinish: () => false } as unknown as ReportOutbox,
  createLogger('test', 'silent'),
  {
    nodeId,
    storage: { kind: 'local', root: '/nonexistent' } as never,
    redisUrl: 'redis://127.0.0.1:1',
    lockPrefix: 'unused:',
    leaseMs: 1000,
    supervisionMs: 60_000,
    spareRunner: false,
    forkRunner: () => {
      const child = spawn(process.execPath, ['-e', STAND_IN], {
        stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
      });
      children.push(child);
      return child;
    },
    observe: (m: RunnerToDaemon) => {
      if (m.t === 'report') for (const p of m.metrics) got.push(p.name);
    },
    locks: { abandonHolder: async () => ({ holdsEnded: 0, waitersDropped: 0 }) },
  },
);
after(async () => {
  await supervisor.drain(2000);
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${got.join(', ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
const settle = () => new Promise((r) => setTimeout(r, 200));

test('a notice its assignment carried and a later one of the run does not is withdrawn, once', async () => {
  const job = '7f1e0c4a-1b2c-4d3e-8f90-0123456789ab';
  supervisor.reconcile([assignment(job, 'placed', false)]);
  await until('the job process', () => supervisor.running.includes(job));
  supervisor.reconcile([assignment(job, 'running', true)]);
  await until('the notice passed on', () => got.includes('got:preempt'));
  supervisor.reconcile([assignment(job, 'running', false)]);
  await until('the withdrawal passed on', () => got.includes('got:withdraw'));
  supervisor.reconcile([assignment(job, 'running', false)]);
  await settle();
  assert.deepEqual(got, ['got:preempt', 'got:withdraw'], 'told once each');
  // Noticed again later: passed on again.
  supervisor.reconcile([assignment(job, 'running', true)]);
  await until('the second notice', () => got.length === 3);
  assert.equal(got[2], 'got:preempt');
  supervisor.reconcile([]);
  await until('the run to go', () => !supervisor.running.includes(job));
});

test("an admin's preemption (by Redis, no notice on the row) is not withdrawn by an assignment", async () => {
  got.length = 0;
  const job = '8f1e0c4a-1b2c-4d3e-8f90-0123456789ab';
  supervisor.reconcile([assignment(job, 'placed', false)]);
  await until('the job process', () => supervisor.running.includes(job));
  assert.equal(supervisor.control(job, 'preempt', 1), true);
  await until('the preempt', () => got.includes('got:preempt'));
  supervisor.reconcile([assignment(job, 'running', false)]);
  await settle();
  assert.deepEqual(got, ['got:preempt']);
  supervisor.reconcile([]);
  await until('the run to go', () => !supervisor.running.includes(job));
});
