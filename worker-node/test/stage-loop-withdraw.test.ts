/**
 * A preemption notice withdrawn while the job's step still runs (scheduler/core/withdraw.ts, passed
 * on by job-supervisor.ts) lets the job run on to its end: no checkpoint and stop for nothing. A
 * drain is the daemon's own and is not withdrawn. Real engine, the real Redis lock.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { jobSpecSchema } from '../../common/job-spec.js';
import { stageDeviceMap } from '../../common/node-protocol/index.js';
import { fileRedis } from '../../test/helpers/redis.js';
import { stageLoopHarness } from '../stage-loop-harness.js';
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
    devices: [0],
    map: stageDeviceMap('temporal', [0], { generate: 1, train: 1 }),
    memoryBytes: 256 * 2 ** 20,
    model: { preset: 'micro' },
    task: { name: 'addition', digits: 2 },
    ...lock,
    balancer: 'off',
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
