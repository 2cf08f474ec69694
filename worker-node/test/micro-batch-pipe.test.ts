import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { MicroBatchPipe } from '../micro-batch-pipe.js';

type Event = { t: number; what: string; step: number; index: number };

/**
 * A generator and a learner with fixed per-micro-batch costs, driven through the pipe as the stage
 * loop drives it; returns what happened when, in milliseconds since the start.
 */
async function simulate(o: {
  steps: number;
  microBatches: number;
  maxWeightLag: number;
  genMs: number;
  trainMs: number;
}) {
  const pipe = new MicroBatchPipe<number>({ ...o, publishedStep: 0 });
  const t0 = performance.now();
  const log: Event[] = [];
  const at = (what: string, step: number, index: number) =>
    log.push({ t: performance.now() - t0, what, step, index });
  let maxSize = 0;
  const producer = (async () => {
    for (let step = 1; step <= o.steps; step++)
      for (let index = 0; index < o.microBatches; index++) {
        if (!(await pipe.mayProduce(step))) return;
        at('gen-start', step, index);
        await sleep(o.genMs);
        at('gen-end', step, index);
        pipe.push({ step, index, value: step });
        maxSize = Math.max(maxSize, pipe.size);
      }
    pipe.endOfProduction();
  })();
  for (let step = 1; step <= o.steps; step++)
    for (let index = 0; index < o.microBatches; index++) {
      const mb = await pipe.take();
      assert.ok(mb, 'a micro-batch for every slot');
      assert.deepEqual([mb.step, mb.index], [step, index], 'in order');
      at('train-start', step, index);
      await sleep(o.trainMs);
      at('train-end', step, index);
      if (index === o.microBatches - 1) {
        at('published', step, index);
        pipe.published(step);
      }
    }
  pipe.close();
  await producer;
  return { log, maxSize, capacity: pipe.capacity };
}

const first = (log: Event[], what: string, step: number, index = 0) =>
  log.find((e) => e.what === what && e.step === step && e.index === index)!.t;

test('lag 0: no step starts generating before the previous step is published, yet micro-batches overlap', async () => {
  const { log, maxSize, capacity } = await simulate({
    steps: 3,
    microBatches: 4,
    maxWeightLag: 0,
    genMs: 15,
    trainMs: 15,
  });
  assert.equal(capacity, 4);
  assert.ok(maxSize <= capacity);
  for (const step of [2, 3]) assert.ok(first(log, 'gen-start', step) >= first(log, 'published', step - 1, 3));
  // Within step 1, generation of micro-batch i + 1 runs while micro-batch i trains.
  for (let i = 0; i < 3; i++) {
    const genNext = [first(log, 'gen-start', 1, i + 1), first(log, 'gen-end', 1, i + 1)];
    const train = [first(log, 'train-start', 1, i), first(log, 'train-end', 1, i)];
    assert.ok(genNext[0]! < train[1]! && train[0]! < genNext[1]!, `micro-batch ${i} overlapped`);
  }
});

test('lag 1: generation runs at most one step ahead of the published weights', async () => {
  const { log, maxSize, capacity } = await simulate({
    steps: 4,
    microBatches: 2,
    maxWeightLag: 1,
    genMs: 5,
    trainMs: 20,
  });
  assert.equal(capacity, 2);
  assert.ok(maxSize <= capacity);
  for (const step of [3, 4]) assert.ok(first(log, 'gen-start', step) >= first(log, 'published', step - 2, 1));
  assert.ok(
    first(log, 'gen-start', 2) < first(log, 'published', 1, 1),
    'step 2 generated while step 1 trained',
  );
});

test('close wakes a waiting producer and consumer', async () => {
  const pipe = new MicroBatchPipe<number>({ microBatches: 1, maxWeightLag: 0, publishedStep: 0 });
  pipe.push({ step: 1, index: 0, value: 1 });
  const producing = pipe.mayProduce(2);
  assert.deepEqual(await pipe.take(), { step: 1, index: 0, value: 1 });
  const taking = pipe.take();
  pipe.close();
  assert.equal(await producing, false);
  assert.equal(await taking, null);
});
