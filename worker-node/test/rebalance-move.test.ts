/**
 * The move itself (rebalance-move.ts) with a job process's engine factory: the learner comes back
 * on its new device count with its weights, optimizer step and weight version; the generator on
 * its own count, following the new learner's publication; both offloaded, the scratch folder gone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import os from 'node:os';
import { createEngine, type CreateEngineOptions } from '../../native/index.js';
import { jobEngineFactory, swapEngines } from '../rebalance-move.js';

const placement = { threadsPerDevice: 1, memoryBytes: 128 * 2 ** 20 };
const opts: CreateEngineOptions = {
  device: { kind: 'cpu', threads: 1, memoryBytes: 3 * placement.memoryBytes },
  model: { preset: 'micro' },
  task: { name: 'addition', digits: 1 },
  seed: 1,
};
const scratchDirs = () => readdirSync(os.tmpdir()).filter((f) => f.startsWith('timeshare-rebalance-'));

test('a 3/1 job restarted as 2/2 keeps the learner state and the weight publication', async () => {
  const shm = `/ts-test-${randomBytes(4).toString('hex')}`;
  const learner = createEngine({
    ...opts,
    device: { ...opts.device, threads: 1, memoryBytes: placement.memoryBytes },
  });
  const generator = createEngine({ ...opts, device: { ...opts.device, threads: 3 }, seed: 2 });
  const before = scratchDirs().length;
  // One trained step, published; the generator follows it.
  const r = await generator.generate({ numPrompts: 4, groupSize: 4 });
  await learner.train({ rollouts: r, algorithm: 'grpo', lr: 3e-4 });
  await learner.publishWeights(shm);
  await generator.attachWeights(shm);
  const was = await learner.info();
  await learner.offload();
  await generator.offload();

  const after = await swapEngines({
    learner,
    generator,
    factory: jobEngineFactory(opts, placement),
    tokens: { all: 7, learner: 7, generator: 5 },
    split: { generate: 2, train: 2 },
    shm,
  });
  try {
    const l = await after.learner.info();
    const g = await after.generator.info();
    assert.equal(l.threads, 2);
    assert.equal(g.threads, 2);
    assert.equal(l.onloaded, false);
    assert.equal(g.onloaded, false);
    assert.equal(l.weightVersion, was.weightVersion, 'the weight version survives the restart');
    assert.ok(l.weightVersion > 0);
    assert.equal(g.weightVersion, l.weightVersion, "the generator took the new learner's weights");
    assert.equal(scratchDirs().length, before, 'the scratch checkpoint is removed');
    // The old engines are closed.
    await assert.rejects(learner.info(), /closed/);
  } finally {
    await after.learner.close();
    await after.generator.close();
  }
});
