/**
 * A spatial job whose generator throws fails with the generator's error: the learner, finding
 * production ended, takes the producer's rejection and the run rejects with it (job-runner.ts
 * reports it as the job's failure). Before, the producer's rejection had no handler while the
 * learner waited, so the job process died of an unhandled rejection, the error was lost to the
 * crash dump, and the job was retried as crashed. Real engines and the real Redis device lock; only
 * the generator is made to fail, on its third call.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { jobSpecSchema } from '../../common/job-spec.js';
import { stageDeviceMap } from '../../common/node-protocol/index.js';
import { fileRedis } from '../../test/helpers/redis.js';
import { stageLoopHarness } from '../stage-loop-harness.js';

const { lock } = fileRedis(after);

test('a spatial job whose generator throws fails with that error, not a crash', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  const spec = jobSpecSchema.parse({
    name: 'generator-fails',
    resources: { devices: 2 },
    workflow: {
      mode: 'spatial',
      maxWeightLag: 1,
      microBatches: 2,
      task: { name: 'addition', digits: 1 },
      steps: 8,
      promptsPerStep: 8,
      groupSize: 4,
      checkpointEvery: 1_000_000,
      evalEvery: 1_000_000,
      warmup: { maxSteps: 0 },
    },
  });
  let calls = 0;
  const h = await stageLoopHarness({
    spec,
    devices: [0, 1],
    map: stageDeviceMap('spatial', [0, 1]),
    memoryBytes: 256 * 2 ** 20,
    model: { preset: 'micro' },
    task: { name: 'addition', digits: 1 },
    ...lock,
    report: () => undefined,
    wrap: (engine, role) => {
      if (role !== 'generator') return engine;
      const generate = engine.generate.bind(engine);
      engine.generate = async (o) => {
        if (++calls === 3) throw new Error('prompt (4) + maxNewTokens (40) exceeds the model context 32');
        return generate(o);
      };
      return engine;
    },
  });
  try {
    await assert.rejects(h.loop.run(), /exceeds the model context 32/);
    // Any rejection left unhandled is reported after the microtasks of its turn: give it one.
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(unhandled, []);
    assert.equal(calls, 3);
  } finally {
    process.off('unhandledRejection', onUnhandled);
    await h.close();
  }
});
