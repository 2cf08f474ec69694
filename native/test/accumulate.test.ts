import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import type { Engine, Rollouts, TrainOptions } from '../index.js';
import { expectCode, microEngine, tempDir } from './helpers.js';

type Batch = Parameters<Engine['train']>[0]['rollouts'];

/** Rows [from, to) of a batch: whole GRPO groups when the bounds are multiples of groupSize. */
function rows(r: Rollouts, from: number, to: number): Batch {
  const T = r.length;
  return {
    batch: to - from,
    length: T,
    promptLength: r.promptLength,
    groupSize: r.groupSize,
    tokens: r.tokens.slice(from * T, to * T),
    pad: r.pad.slice(from, to),
    logprobs: r.logprobs.slice(from * T, to * T),
    versions: r.versions.slice(from * T, to * T),
    mask: r.mask.slice(from * T, to * T),
    rewards: r.rewards.slice(from, to),
    lengths: r.lengths.slice(from, to),
  };
}

function split(r: Rollouts, k: number): Batch[] {
  const per = r.batch / k;
  return Array.from({ length: k }, (_, i) => rows(r, i * per, (i + 1) * per));
}

/** Every float of a checkpoint's tensors (safetensors: u64 header length, JSON header, data). */
async function tensors(e: Engine, tag: string): Promise<Float32Array> {
  const dir = tempDir(tag);
  await e.saveCheckpoint(dir);
  const [model, optimizer] = ['model.safetensors', 'optimizer.safetensors'].map((f) => {
    const buf = readFileSync(path.join(dir, f));
    const start = 8 + Number(buf.readBigUInt64LE(0));
    const data = buf.subarray(start);
    return new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
  }) as [Float32Array, Float32Array];
  const out = new Float32Array(model.length + optimizer.length);
  out.set(model);
  out.set(optimizer, model.length);
  return out;
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

/** Sampled sequences with rewards that vary within every group (an untrained model earns none). */
async function rollouts(): Promise<Rollouts> {
  const source = microEngine({ seed: 11 });
  const r = await source.generate({ numPrompts: 8, groupSize: 4, temperature: 1 });
  await source.close();
  r.rewards.forEach((_, i) => (r.rewards[i] = ((i * 7) % 5) / 4));
  return r;
}

// eps = 1 makes Adam's first step nearly linear in the gradient, so the comparison checks the
// accumulated gradient itself rather than sign(g), which float noise flips where g is ~0.
const linearAdam = { eps: 1, lr: 0.5, gradClip: 0 };

for (const [name, options] of [
  ['grpo with a KL penalty', { algorithm: 'grpo', klCoef: 0.05, ...linearAdam }],
  ['reinforce_is', { algorithm: 'reinforce_is', ...linearAdam }],
] as const) {
  test(`${name}: k accumulated micro-batches equal one train() on their concatenation`, async () => {
    const r = await rollouts();
    // A first full step moves the policy away from the KL reference it snapshots, so that the
    // compared step has a non-zero KL gradient.
    const prepared = async () => {
      const e = microEngine({ seed: 3 });
      await e.train({ rollouts: r, ...(options as TrainOptions), lr: 0.1 });
      return e;
    };
    const full = await prepared();
    const whole = await full.train({ rollouts: r, ...(options as TrainOptions) });
    assert.ok(whole.gradNorm > 0 && whole.kl >= 0);
    const expected = await tensors(full, 'acc-full');
    for (const k of [2, 4]) {
      const e = await prepared();
      const v0 = (await e.info()).weightVersion;
      let tokens = 0;
      for (const [i, mb] of split(r, k).entries()) {
        const s = await e.train({ rollouts: mb, accumulate: true, ...(options as TrainOptions) });
        assert.equal(s.microBatches, i + 1);
        assert.equal(s.weightVersion, v0, 'accumulating does not change the weights');
        tokens += s.tokens;
      }
      assert.equal((await e.info()).pendingMicroBatches, k);
      const applied = await e.applyGradients();
      assert.equal(applied.weightVersion, v0 + 1);
      assert.equal(applied.microBatches, k);
      assert.equal(applied.tokens, tokens);
      assert.equal(applied.tokens, whole.tokens);
      assert.ok(Math.abs(applied.gradNorm - whole.gradNorm) <= 1e-5 * whole.gradNorm, `gradNorm k=${k}`);
      assert.ok(
        Math.abs(applied.loss - whole.loss) <= 1e-5 * Math.max(1, Math.abs(whole.loss)),
        `loss k=${k}`,
      );
      assert.ok(Math.abs(applied.rewardMean - whole.rewardMean) < 1e-9);
      assert.ok(Math.abs(applied.rewardStd - whole.rewardStd) < 1e-6);
      assert.ok(Math.abs(applied.kl - whole.kl) < 1e-6);
      assert.equal((await e.info()).pendingMicroBatches, 0);
      const diff = maxAbsDiff(await tensors(e, `acc-${k}`), expected);
      assert.ok(diff < 1e-5, `k=${k}: parameters and moments differ by ${diff}`);
      await e.close();
    }
    await full.close();
  });
}

test('pending gradients survive offload/onload bit-exactly', async () => {
  const r = await rollouts();
  const [a, b] = [microEngine({ seed: 3 }), microEngine({ seed: 3 })];
  const [m0, m1] = split(r, 2) as [Batch, Batch];
  await a.train({ rollouts: m0, accumulate: true });
  await a.offload();
  await expectCode(a.train({ rollouts: m1, accumulate: true }), 'NOT_ONLOADED');
  assert.equal((await a.info()).pendingMicroBatches, 1);
  await a.onload(1);
  await a.train({ rollouts: m1, accumulate: true });
  await a.applyGradients();
  await b.train({ rollouts: m0, accumulate: true });
  await b.train({ rollouts: m1, accumulate: true });
  await b.applyGradients();
  assert.equal(maxAbsDiff(await tensors(a, 'off-a'), await tensors(b, 'off-b')), 0);
  await a.close();
  await b.close();
});

test('misuse: nothing to apply, mismatched options, pending grads block train and checkpoints', async () => {
  const r = await rollouts();
  const e = microEngine();
  const [m0, m1] = split(r, 2) as [Batch, Batch];
  const err = await expectCode(e.applyGradients(), 'INVALID_ARGUMENT');
  assert.match(err.message, /nothing accumulated/);
  await expectCode(e.train({ rollouts: m0, accumulate: true, epochs: 2 }), 'INVALID_ARGUMENT');
  await expectCode(
    () => e.train({ rollouts: m0, accumulate: 'yes' as unknown as boolean }),
    'INVALID_ARGUMENT',
  );
  await e.train({ rollouts: m0, accumulate: true, lr: 1e-3 });
  assert.match(
    (await expectCode(e.train({ rollouts: m1, accumulate: true, lr: 2e-3 }), 'INVALID_ARGUMENT')).message,
    /differ/,
  );
  assert.match((await expectCode(e.train({ rollouts: m1 }), 'INVALID_ARGUMENT')).message, /pending/);
  await expectCode(e.saveCheckpoint(tempDir('acc-pending')), 'INVALID_ARGUMENT');
  await expectCode(e.warmup({ maxSteps: 1 }), 'INVALID_ARGUMENT');
  const v = (await e.info()).weightVersion;
  assert.deepEqual(await e.discardGradients(), { discarded: 1 });
  assert.equal((await e.info()).weightVersion, v, 'discarding does not step');
  await expectCode(e.applyGradients(), 'INVALID_ARGUMENT');
  const s = await e.train({ rollouts: m1 });
  assert.equal(s.microBatches, 1);
  assert.equal(s.weightVersion, v + 1);
  await e.saveCheckpoint(tempDir('acc-after'));
  await e.close();
});
