/**
 * A run that succeeds says why it ended where it did: all its steps, or the stopping rule meeting
 * `targetReward` (the last 3 steps' mean reward) or `targetAccuracy` (the held-out evaluation)
 * first. The daemon sends it on in the finish report (node protocol 3) and the tenant reads it in
 * `job.succeeded`; a job that stopped at step 10 of 300 said only "succeeded". Real engines, the
 * real Redis lock.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { jobSpecSchema } from '../../common/job-spec.js';
import { stageDeviceMap } from '../../common/node-protocol/index.js';
import { fileRedis } from '../../test/helpers/redis.js';
import { stageLoopHarness } from '../stage-loop-harness.js';

const { lock } = fileRedis(after);

/** Runs a one-device temporal job with these workflow settings; returns its end and its last step. */
async function runWith(workflow: Record<string, unknown>) {
  const spec = jobSpecSchema.parse({
    name: 'finish-reason',
    workflow: {
      model: { preset: 'micro' },
      task: { name: 'addition', digits: 1 },
      promptsPerStep: 4,
      groupSize: 2,
      checkpointEvery: 1_000_000,
      warmup: { maxSteps: 0 },
      ...workflow,
    },
  });
  let lastStep = 0;
  const h = await stageLoopHarness({
    spec,
    devices: [0],
    map: stageDeviceMap('temporal', [0]),
    memoryBytes: 256 * 2 ** 20,
    model: { preset: 'micro' },
    task: { name: 'addition', digits: 1 },
    ...lock,
    report: (r) => {
      for (const m of r.metrics) lastStep = Math.max(lastStep, m.step);
    },
  });
  try {
    return { end: await h.loop.run(), lastStep };
  } finally {
    await h.close();
  }
}

test('a run that does all its steps says so', async () => {
  const { end, lastStep } = await runWith({ steps: 2, evalEvery: 100 });
  assert.deepEqual(end, { outcome: 'succeeded', error: null, reason: 'steps_completed' });
  assert.equal(lastStep, 2);
});

test('a run the stopping rule ends early names the target it met', async () => {
  // Any accuracy is at least 0: met at the first evaluation.
  const accuracy = await runWith({ steps: 50, evalEvery: 2, targetAccuracy: 0 });
  assert.deepEqual(accuracy.end, { outcome: 'succeeded', error: null, reason: 'target_accuracy' });
  assert.equal(accuracy.lastStep, 2);
  // Any mean reward is at least 0: met once 3 steps have a mean.
  const reward = await runWith({ steps: 50, evalEvery: 100, targetReward: 0 });
  assert.deepEqual(reward.end, { outcome: 'succeeded', error: null, reason: 'target_reward' });
  assert.equal(reward.lastStep, 3);
});
