/**
 * A run that ended on this node is not started again while its outcome waits in the outbox. The
 * control plane learns that a run started and ended only from the reports the outbox delivers, in
 * order; behind a backlog (or through an outage) the assignment still lists the run as `placed`,
 * and the daemon used to forget the run once its finish record was on disk, then start it again at
 * the next poll (QA: one job ran 5 times after a PostgreSQL outage). A daemon started again with
 * such a finish left on disk must not start the run either. The job process is a stand-in that
 * ends its run at once; the outbox is the real one, in a temporary folder, with a control plane
 * that never answers.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../common/logger.js';
import type { Assignment } from '../control-plane-client.js';
import { JobSupervisor } from '../job-supervisor.js';
import { ReportOutbox, type OutboxReport } from '../report-outbox.js';

const STAND_IN = `
process.on('message', (m) => {
  if (m.t !== 'start') return;
  process.send({ t: 'started', resumedFromStep: null });
  process.send({ t: 'finished', outcome: 'succeeded', error: null, reason: 'steps_completed' }, () => process.exit(0));
});`;

const jobId = '3c2b1a09-8f7e-4d6c-9b5a-0123456789ab';
const nodeId = '9a8b7c6d-5e4f-4a3b-8c2d-0123456789ab';
const assignment = (queueSeq: number): Assignment =>
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
  }) as Assignment;

const dir = await mkdtemp(path.join(os.tmpdir(), 'ended-runs-'));
const supervisors: JobSupervisor[] = [];
const outboxes: ReportOutbox[] = [];
after(async () => {
  for (const s of supervisors) await s.drain(2000);
  for (const o of outboxes) o.close();
  await rm(dir, { recursive: true, force: true });
});

/** An outbox whose control plane is unreachable: everything put stays pending, in order. */
async function unreachableOutbox(): Promise<{ outbox: ReportOutbox; sent: OutboxReport[] }> {
  const sent: OutboxReport[] = [];
  const outbox = new ReportOutbox({
    dir,
    send: async (r) => {
      sent.push(r);
      throw new Error('connect ECONNREFUSED');
    },
    isFinal: () => false,
    logger: createLogger('test', 'silent'),
    backoffMs: { first: 60_000, max: 60_000 },
  });
  outboxes.push(outbox);
  await outbox.open();
  return { outbox, sent };
}

function supervise(outbox: ReportOutbox): { supervisor: JobSupervisor; forks: () => number } {
  let forks = 0;
  const supervisor = new JobSupervisor(outbox, createLogger('test', 'silent'), {
    nodeId,
    storage: { kind: 'local', root: '/nonexistent' } as never,
    redisUrl: 'redis://127.0.0.1:1',
    lockPrefix: 'unused:',
    leaseMs: 1000,
    supervisionMs: 60_000,
    spareRunner: false,
    forkRunner: () => {
      forks++;
      return spawn(process.execPath, ['-e', STAND_IN], { stdio: ['ignore', 'inherit', 'pipe', 'ipc'] });
    },
  });
  supervisors.push(supervisor);
  return { supervisor, forks: () => forks };
}

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
const settle = () => new Promise((r) => setTimeout(r, 300));

test('a run whose finish waits in the outbox is not started again by the next reconcile', async () => {
  const { outbox } = await unreachableOutbox();
  const { supervisor, forks } = supervise(outbox);
  supervisor.reconcile([assignment(4)]);
  await until('the run to end', () => forks() === 1 && supervisor.running.length === 0);
  assert.equal(outbox.pending, 2, 'start and finish wait, undelivered');
  assert.equal(outbox.holdsFinish(jobId, 4), true);

  // The control plane has not heard: the assignment still lists run 4 as placed, poll after poll.
  for (let i = 0; i < 3; i++) {
    supervisor.reconcile([assignment(4)]);
    await settle();
  }
  assert.equal(forks(), 1, 'run 4 ran once');
  assert.deepEqual(supervisor.running, []);

  // The job was requeued and placed here again as run 5: that run starts.
  supervisor.reconcile([assignment(5)]);
  await until('run 5 to end', () => forks() === 2 && supervisor.running.length === 0);
  supervisor.reconcile([assignment(5)]);
  await settle();
  assert.equal(forks(), 2, 'run 5 ran once');
  await supervisor.drain(2000);
  outbox.close();
});

test('a daemon started again with a finish left on disk does not start that run', async () => {
  // What the first test's daemon left: starts and finishes of runs 4 and 5, undelivered.
  const { outbox } = await unreachableOutbox();
  assert.equal(outbox.pending, 4);
  assert.equal(outbox.holdsFinish(jobId, 5), true);
  const { supervisor, forks } = supervise(outbox);
  supervisor.reconcile([assignment(5)]);
  await settle();
  assert.equal(forks(), 0, 'run 5 ended under the earlier daemon');
  supervisor.reconcile([assignment(6)]);
  await until('run 6 to end', () => forks() === 1 && supervisor.running.length === 0);
  assert.equal(outbox.holdsFinish(jobId, 6), true);
});
