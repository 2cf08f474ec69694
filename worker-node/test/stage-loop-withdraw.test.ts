/**
 * A preemption notice withdrawn while the job's step still runs, or while a time-shared job waits
 * for its turn on the lock (scheduler/core/withdraw.ts, passed on by job-supervisor.ts), lets the
 * job run on to its end: no checkpoint and stop for nothing. A drain is the daemon's own and is
 * not withdrawn. Real engine, the real Redis lock.
 */
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { jobSpecSchema } from '../../common/job-spec.js';
import { fileRedis } from '../../test/helpers/redis.js';
import { microOnDevice0, stageLoopHarness } from '../stage-loop-harness.js';
import type { Grant } from '../../common/device-lock/index.js';
import type { Engine } from '../../native/index.js';
import type { Request } from '../stage-loop.js';

const { lock } = fileRedis(after);

/** Runs 4 steps; during step 2 the daemon asks `request` and then withdraws a notice. */
async function run(request: Exclude<Request, null>) {
  const spec = jobSpecSchema.parse({
    name: 'withdrawn',
    workflow: { model: { preset: 'micro' }, task: { name: 'addition', digits: 2 }, steps: 4 },
  });
  let steps = 0;
  let withdrawn: boolean | null = null;
  const h = await stageLoopHarness({
    spec,
    ...microOnDevice0(),
    ...lock,
    report: () => undefined,
    wrap: (e: Engine) => {
      const rlStep = e.rlStep.bind(e);
      e.rlStep = (o) => {
        if (++steps === 2) {
          h.loop.requestStop(request);
          withdrawn = h.loop.withdrawPreempt();
        }
        return rlStep(o);
      };
      return e;
    },
  });
  try {
    return { end: await h.loop.run(), steps, withdrawn };
  } finally {
    await h.close();
  }
}

test(
  'a notice withdrawn before the step ends: the job runs all its steps',
  { timeout: 120_000 },
  async () => {
    const r = await run('preempt');
    assert.equal(r.withdrawn, true);
    assert.equal(r.end.outcome, 'succeeded');
    assert.equal(r.steps, 4);
  },
);

test(
  'a drain is not a notice: withdrawing changes nothing, the job stops',
  { timeout: 120_000 },
  async () => {
    const r = await run('drain');
    assert.equal(r.withdrawn, false);
    assert.equal(r.end.outcome, 'drained');
    assert.equal(r.steps, 2);
  },
);

/**
 * A time-shared job whose step 2 waits for the device behind another holder gets `request` while
 * it waits (and, if `withdraw`, the notice's withdrawal 50 ms later); then the holder lets go.
 * `later` queues another waiter behind the job's before the request: the job keeps its place
 * ahead of it.
 */
async function whileWaiting(request: Exclude<Request, null>, o: { withdraw: boolean; later: boolean }) {
  const spec = jobSpecSchema.parse({
    name: 'withdrawn-waiting',
    workflow: {
      model: { preset: 'micro' },
      task: { name: 'addition', digits: 2 },
      steps: 4,
      warmup: { maxSteps: 0, targetAccuracy: 0.3 },
    },
  });
  let steps = 0;
  const checkpoints: number[] = [];
  const profiles: { stage: string; step: number | null }[] = [];
  let queued: () => void = () => undefined;
  let other = null as Promise<Grant> | null;
  const h = await stageLoopHarness({
    spec,
    ...microOnDevice0(),
    ...lock,
    report: (r) => profiles.push(...r.profiles.map((p) => ({ stage: p.stage, step: p.step }))),
    saveCheckpoint: async (step) => {
      checkpoints.push(step);
      return { step, sizeBytes: 0, sha256: '0'.repeat(64), meta: {} };
    },
    wrap: (e: Engine) => {
      const rlStep = e.rlStep.bind(e);
      e.rlStep = async (opts) => {
        // During step 1 the other holder queues: it gets the device when step 1 lets it go.
        if (++steps === 1)
          await new Promise<void>((resolve) => {
            queued = resolve;
            other = holder('other');
          });
        return rlStep(opts);
      };
      return e;
    },
  });
  const device = `${h.start.nodeId}/0`;
  const holder = (job: string) =>
    h.locks.acquire({
      devices: [device],
      job,
      stage: 'x',
      holder: job,
      leaseMs: 60_000,
      onQueued: () => queued(),
    });
  const waitingFor = async (job: string) => {
    for (let i = 0; i < 500; i++) {
      if ((await h.locks.listWaiters()).some((w) => w.job === job)) return;
      await sleep(10);
    }
    throw new Error(`${job} never queued`);
  };
  try {
    const ended = h.loop.run();
    await waitingFor(h.start.jobId);
    const later = o.later ? holder('later') : null;
    if (later) await waitingFor('later');
    const laterDone = later?.then((g) => h.locks.release(g));
    h.loop.requestStop(request);
    await sleep(50);
    const withdrawn = o.withdraw ? h.loop.withdrawPreempt() : null;
    // What the job did before the other holder let go: a cancel ends the wait at once.
    const early = await Promise.race([ended, sleep(request === 'cancel' ? 5000 : 300).then(() => null)]);
    await h.locks.release(await other!);
    const end = await ended;
    await laterDone;
    const { intervals } = await h.locks.readTimeline({ devices: [device] });
    // Who was granted the device once the other holder let go.
    const holders = intervals.map((i) => i.job);
    const grants = holders.slice(holders.indexOf('other') + 1);
    return { end, early, steps, withdrawn, checkpoints, profiles, grants, jobId: h.start.jobId };
  } finally {
    await h.close();
  }
}

test(
  'a notice withdrawn while the job waits for its turn on the lock: it runs all its steps',
  { timeout: 120_000 },
  async () => {
    const r = await whileWaiting('preempt', { withdraw: true, later: false });
    assert.equal(r.withdrawn, true);
    assert.equal(r.early, null);
    assert.equal(r.end.outcome, 'succeeded');
    assert.equal(r.steps, 4);
    assert.deepEqual(r.checkpoints, [4]);
  },
);

test(
  'a notice that stands while the job waits: at its turn, its final checkpoint in that one hold',
  { timeout: 120_000 },
  async () => {
    const r = await whileWaiting('preempt', { withdraw: false, later: true });
    assert.equal(r.early, null, 'it keeps its place rather than stop at once');
    assert.equal(r.end.outcome, 'preempted');
    assert.equal(r.steps, 1);
    assert.deepEqual(r.checkpoints, [1]);
    assert.deepEqual(
      r.profiles.filter((p) => p.stage === 'checkpoint'),
      [{ stage: 'checkpoint', step: 1 }],
    );
    // Granted once for the checkpoint, in the place it had, ahead of `later`.
    assert.deepEqual(r.grants, [r.jobId, 'later']);
  },
);

test('a cancel while the job waits for its turn still stops it at once', { timeout: 120_000 }, async () => {
  const r = await whileWaiting('cancel', { withdraw: false, later: false });
  assert.notEqual(r.early, null, 'it ended while the other holder still held the device');
  assert.equal(r.end.outcome, 'cancelled');
  assert.equal(r.steps, 1);
  assert.deepEqual(r.checkpoints, []);
});
