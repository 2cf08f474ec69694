/**
 * A control request is for one run of a job (its `queueSeq`): the daemon passes it on only to the
 * job process running that run. A late preempt published for an earlier run (a scheduler leader
 * paused after its commit, a slow API process) must not preempt the run placed since, and every
 * report the daemon relays names the run it came from and its number in that run (1, 2, …, fixed
 * when it is put in the outbox, so a resend carries the same one). The job process here is a stand-in that
 * answers control requests as job-runner.ts does (checkpoint-free), so no engine is needed.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createLogger } from '../../common/logger.js';
import type { Assignment } from '../control-plane-client.js';
import { JobSupervisor } from '../job-supervisor.js';
import type { OutboxReport, ReportOutbox } from '../report-outbox.js';

const STAND_IN = `
process.on('message', (m) => {
  if (m.t === 'start') {
    process.send({ t: 'started', resumedFromStep: null });
    process.send({ t: 'report', metrics: [], profiles: [], deviceSeconds: 1 });
    process.send({ t: 'checkpoint', step: 1, sizeBytes: 1, sha256: 'c'.repeat(64), meta: {} });
  }
  else if (m.t === 'preempt' || m.t === 'drain')
    process.send({ t: 'finished', outcome: m.t === 'preempt' ? 'preempted' : 'drained', error: null }, () => process.exit(0));
  else if (m.t === 'cancel') process.send({ t: 'cancelled' }, () => process.exit(0));
});`;

const jobId = '7f1e0c4a-1b2c-4d3e-8f90-0123456789ab';
const nodeId = '0a1b2c3d-4e5f-4a6b-8c7d-0123456789ab';
const assignment = (queueSeq: number, extra: Partial<Assignment> = {}): Assignment =>
  ({
    jobId,
    tenantId: '11111111-2222-4333-8444-555555555555',
    status: 'placed',
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
    queueSeq,
    resumeFrom: null,
    preemptRequestedAt: null,
    ...extra,
  }) as Assignment;

/** The job processes forked, and the lock holders the daemon abandoned as they exited. */
const children: ChildProcess[] = [];
const abandoned: string[] = [];
const puts: OutboxReport[] = [];
const outbox = {
  put: async (r: OutboxReport) => void puts.push(r),
  holdsFinish: () => false,
} as unknown as ReportOutbox;
const supervisor = new JobSupervisor(outbox, createLogger('test', 'silent'), {
  nodeId,
  storage: { kind: 'local', root: '/nonexistent' } as never,
  redisUrl: 'redis://127.0.0.1:1',
  lockPrefix: 'unused:',
  leaseMs: 1000,
  supervisionMs: 60_000,
  spareRunner: false,
  forkRunner: () => {
    const child = spawn(process.execPath, ['-e', STAND_IN], { stdio: ['ignore', 'inherit', 'pipe', 'ipc'] });
    children.push(child);
    return child;
  },
  locks: {
    abandonHolder: async (holder: string) => {
      abandoned.push(holder);
      return { holdsEnded: 0, waitersDropped: 0 };
    },
  },
});
after(() => supervisor.drain(2000));

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
const reportsOf = (kind: OutboxReport['kind']) => puts.filter((r) => r.kind === kind);

test('a preempt or cancel for another run of the job is ignored; one for its run is passed on', async () => {
  supervisor.reconcile([assignment(3, { status: 'placed' })]);
  await until('the first reports', () => reportsOf('checkpoint').length === 1);
  assert.equal(reportsOf('start')[0]!.body.queueSeq, 3);
  const numbered = puts.filter((r) => r.kind === 'report' || r.kind === 'checkpoint');
  assert.deepEqual(
    numbered.map((r) => [r.kind, r.body.queueSeq, (r.body as { reportSeq: number }).reportSeq]),
    [
      ['report', 3, 1],
      ['checkpoint', 3, 2],
    ],
  );

  // An earlier run's late preempt, and a request for a run not started here, reach nothing.
  assert.equal(supervisor.control(jobId, 'preempt', 2), false);
  assert.equal(supervisor.control(jobId, 'cancel', 4), false);
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(reportsOf('finish'), []);
  assert.deepEqual(supervisor.running, [jobId]);

  assert.equal(supervisor.control(jobId, 'preempt', 3), true);
  await until('the outcome', () => reportsOf('finish').length === 1);
  const { endedAt, ...finish } = reportsOf('finish')[0]!.body as { endedAt: string };
  assert.deepEqual(finish, { queueSeq: 3, outcome: 'preempted', error: null });
  // When the run ended, by this node's clock (node protocol 4): the events say it as `runEndedAt`.
  assert.ok(Math.abs(Date.parse(endedAt) - Date.now()) < 60_000, endedAt);
  await until('the process to go', () => supervisor.running.length === 0);
  // Whatever the exited process still had in the device lock is ended at once, by its holder name.
  await until('its lock holder abandoned', () => abandoned.length === 1);
  assert.deepEqual(abandoned, [`${nodeId}:${children[0]!.pid}`]);
});

test('a run assigned here again replaces the stale one: cancelled, not preempted, then started', async () => {
  puts.length = 0;
  supervisor.reconcile([assignment(5, { status: 'placed' })]);
  await until('run 5 to start', () => reportsOf('start').length === 1);
  // The job went back to the queue and was placed here again (run 6), already under a notice.
  const again = assignment(6, { status: 'placed', preemptRequestedAt: new Date().toISOString() });
  supervisor.reconcile([again]);
  await until('run 5 to go', () => supervisor.running.length === 0);
  assert.deepEqual(reportsOf('finish'), [], 'the stale run was cancelled, not preempted for run 6');
  supervisor.reconcile([again]);
  await until('run 6 to report', () => reportsOf('checkpoint').length === 2);
  assert.equal(reportsOf('start')[1]!.body.queueSeq, 6);
  // A new run numbers its reports afresh.
  assert.deepEqual(
    reportsOf('checkpoint').map((r) => [r.body.queueSeq, (r.body as { reportSeq: number }).reportSeq]),
    [
      [5, 2],
      [6, 2],
    ],
  );
});
