/**
 * A cancel that arrives during the supervised warm-up ends the job before the warm-up's next step.
 * The warm-up is one native call of up to `maxSteps` steps, and the loop used to wait it out while
 * holding the job's devices (a user cancelled 3 s into a run and the node kept it 15 s more, charged
 * to the tenant). Real engine, the real Redis lock.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { jobSpecSchema } from '../../common/job-spec.js';
import { fileRedis } from '../../test/helpers/redis.js';
import { microOnDevice0, stageLoopHarness } from '../stage-loop-harness.js';
import type { Engine } from '../../native/index.js';

const { lock } = fileRedis(after);

test(
  'a cancel stops the warm-up between two steps and the job ends cancelled',
  { timeout: 120_000 },
  async () => {
    const spec = jobSpecSchema.parse({
      name: 'cancel-warmup',
      workflow: {
        model: { preset: 'micro' },
        task: { name: 'addition', digits: 2 },
        steps: 5,
        // Out of reach: without the cancel, all of its steps (38 s on this machine, against 0.1 s).
        warmup: { maxSteps: 100_000, targetAccuracy: 1 },
      },
    });
    let warmups: Promise<{ interrupted: boolean; steps: number }>[] = [];
    let started: () => void = () => undefined;
    const warming = new Promise<void>((resolve) => (started = resolve));
    const h = await stageLoopHarness({
      spec,
      ...microOnDevice0(),
      ...lock,
      report: () => undefined,
      wrap: (e: Engine) => {
        const warmup = e.warmup.bind(e);
        e.warmup = (o, signal) => {
          const run = warmup(o, signal);
          warmups.push(run);
          started();
          return run;
        };
        return e;
      },
    });
    try {
      const running = h.loop.run();
      await warming;
      h.loop.requestStop('cancel');
      assert.equal((await running).outcome, 'cancelled');
      const [warm] = await Promise.all(warmups);
      assert.equal(warm?.interrupted, true);
      assert.ok((warm?.steps ?? 0) < 100_000, `${warm?.steps} steps`);
    } finally {
      warmups = [];
      await h.close();
    }
  },
);
