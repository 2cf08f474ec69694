import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import { ENGINE_ERROR_CODES, EngineError, type Engine } from '../index.js';
import { nativeModule } from '../engine-native.js';
import { microEngine, tempDir } from './helpers.js';

// A deterministic generator so a failure reproduces.
function lcg(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const weird: unknown[] = [
  undefined,
  null,
  NaN,
  Infinity,
  -1,
  0,
  1,
  2.5,
  1e12,
  -1e12,
  'x',
  '',
  true,
  [],
  [1, 2],
  {},
  { a: 1 },
  10n,
  -5n,
  () => 1,
  Symbol('s'),
  new Float32Array(3),
];

function randomValue(rnd: () => number): unknown {
  return weird[Math.floor(rnd() * weird.length)];
}

function randomOptions(rnd: () => number, keys: string[]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const k of keys) if (rnd() < 0.5) o[k] = randomValue(rnd);
  return o;
}

const genKeys = [
  'numPrompts',
  'groupSize',
  'split',
  'temperature',
  'topP',
  'maxNewTokens',
  'stopToken',
  'decode',
];
const trainKeys = ['algorithm', 'lr', 'betas', 'clip', 'klCoef', 'epochs', 'gradClip', 'isTruncation'];

function settle(p: () => unknown): Promise<unknown> {
  return Promise.resolve()
    .then(p)
    .then(
      () => undefined,
      (e: unknown) => e,
    );
}

test('facade fuzz: random and wrong arguments reject with EngineError codes and never crash', async () => {
  const e: Engine = microEngine();
  const scratch = tempDir('fuzz');
  const rnd = lcg(12345);
  const calls: ((r: () => number) => unknown)[] = [
    (r) => e.generate(randomOptions(r, genKeys) as never),
    (r) => e.rlStep({ generate: randomOptions(r, genKeys), train: randomOptions(r, trainKeys) } as never),
    (r) => e.train({ rollouts: randomValue(r), ...randomOptions(r, trainKeys) } as never),
    (r) =>
      e.warmup({
        ...randomOptions(r, ['maxSteps', 'batchSize', 'targetAccuracy', 'probeEvery', 'lr']),
      } as never),
    (r) => e.evaluate(randomOptions(r, ['split', 'limit', 'samples']) as never),
    (r) => e.onload(randomValue(r) as never),
    (r) => {
      // Strings become paths under a temp dir: the fuzz must not write checkpoints into the repo.
      const v = randomValue(r);
      return e.saveCheckpoint((typeof v === 'string' ? path.join(scratch, v || 'empty') : v) as never);
    },
    (r) => e.loadCheckpoint(randomValue(r) as never),
    (r) => e.attachWeights(randomValue(r) as never),
    (r) => e.publishWeights(typeof randomValue(r) === 'string' ? 'bad name' : undefined),
  ];
  let rejected = 0;
  for (let i = 0; i < 300; i++) {
    const call = calls[Math.floor(rnd() * calls.length)]!;
    // Keep generation small so the fuzz loop stays fast when random options happen to be valid.
    const err = await settle(() => call(rnd));
    if (err !== undefined) {
      rejected++;
      assert.ok(err instanceof EngineError, `non-EngineError: ${String(err)}`);
      assert.ok((ENGINE_ERROR_CODES as readonly string[]).includes(err.code));
    }
  }
  assert.ok(rejected > 50, `most random calls should be rejected (${rejected})`);
  const ok = await e.generate({ numPrompts: 2, groupSize: 2 });
  assert.equal(ok.batch, 4, 'engine still healthy after the fuzz');

  // Real rollouts with broken contents.
  const r = await e.generate({ numPrompts: 2, groupSize: 2 });
  const bad = { ...r, tokens: r.tokens.map(() => 999) };
  const err = await settle(() => e.train({ rollouts: bad }));
  assert.ok(err instanceof EngineError && err.code === 'INVALID_ARGUMENT');
  const nan = { ...r, logprobs: r.logprobs.map(() => NaN) };
  const err2 = await settle(() => e.train({ rollouts: nan }));
  assert.ok(err2 instanceof EngineError && err2.code === 'NON_FINITE');
  await e.close();
  const closed = await settle(() => e.generate());
  assert.ok(closed instanceof EngineError && closed.code === 'ENGINE_CLOSED');
});

test('native surface fuzz: garbage straight into the addon throws errors with codes, never crashes', async () => {
  const mod = nativeModule();
  const rnd = lcg(777);
  for (let i = 0; i < 60; i++) {
    const opts = {
      ...randomOptions(rnd, ['threads', 'memoryBytes', 'preset', 'seed', 'gemm']),
      task: randomValue(rnd),
    };
    try {
      const n = new mod.NativeEngine(opts as never);
      n.close();
    } catch (e) {
      assert.equal(typeof (e as { code?: unknown }).code, 'string');
    }
  }
  const n = new mod.NativeEngine({
    threads: 1,
    memoryBytes: 2 ** 26,
    gemm: 'own',
    preset: 'micro',
    model: { context: 32, dModel: 32, layers: 1, heads: 2, mlpMult: 4 },
    task: { name: 'addition', digits: 2, minLength: 3, maxLength: 6, alphabet: 10 },
    seed: 1,
  });
  // saveCheckpoint is fuzzed through the facade, where string paths are redirected to a temp dir.
  const methods = ['warmup', 'generate', 'train', 'rlStep', 'evaluate', 'onload', 'loadCheckpoint'];
  for (let i = 0; i < 200; i++) {
    const m = methods[Math.floor(rnd() * methods.length)]! as keyof typeof n;
    const args = [randomValue(rnd), randomValue(rnd)];
    try {
      await (n[m] as (...a: unknown[]) => unknown).apply(n, args);
    } catch (e) {
      assert.equal(typeof (e as { code?: unknown }).code, 'string', `${String(m)}: ${String(e)}`);
    }
  }
  // One call at a time per instance: a second concurrent native call is refused.
  const first = n.generate({
    numPrompts: 64,
    groupSize: 8,
    split: 'train',
    temperature: 1,
    topP: 1,
    maxNewTokens: 0,
    stopToken: -1,
    decode: false,
    partialTail: 0,
    maxCarries: 1,
  });
  assert.throws(() => n.evaluate({ split: 'eval', limit: 1, samples: 0 }), { code: 'ENGINE_BUSY' });
  await first;
  n.close();
});

test('the facade queues concurrent calls on one engine instead of failing them', async () => {
  const e = microEngine();
  const results = await Promise.all([
    e.generate({ numPrompts: 4, groupSize: 2 }),
    e.rlStep({ generate: { numPrompts: 4, groupSize: 2 } }),
    e.evaluate({ limit: 10 }),
  ]);
  assert.equal(results.length, 3);
  await e.close();
});
