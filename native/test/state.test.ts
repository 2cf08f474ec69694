import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { createEngine } from '../index.js';
import { expectCode, microEngine, rlOptions, tempDir } from './helpers.js';

function files(dir: string): Buffer[] {
  return ['model.safetensors', 'optimizer.safetensors'].map((f) => readFileSync(path.join(dir, f)));
}

test('offload -> onload restores weights and optimizer state bit-exactly; training continues identically', async () => {
  const a = microEngine();
  const b = microEngine();
  for (const e of [a, b]) for (let i = 0; i < 3; i++) await e.rlStep(rlOptions);
  const before = tempDir('off-before');
  await a.saveCheckpoint(before);
  const off = await a.offload();
  assert.ok(off.bytes > 0);
  assert.equal((await a.info()).onloaded, false);
  assert.equal((await a.info()).arenaBytes, 0, 'offload frees the arena');
  await expectCode(a.generate(), 'NOT_ONLOADED');
  await expectCode(a.rlStep(rlOptions), 'NOT_ONLOADED');
  await a.onload(1);
  const after = tempDir('off-after');
  await a.saveCheckpoint(after);
  assert.deepEqual(files(after), files(before));
  for (const e of [a, b]) for (let i = 0; i < 2; i++) await e.rlStep(rlOptions);
  const da = tempDir('off-a');
  const db = tempDir('off-b');
  await a.saveCheckpoint(da);
  await b.saveCheckpoint(db);
  assert.deepEqual(files(da), files(db), 'offload/onload does not perturb training');
  await a.close();
  await b.close();
});

test('onload refuses a fencing token older than the last one seen', async () => {
  const e = microEngine();
  await e.onload(5);
  await e.offload();
  const err = await expectCode(e.onload(4), 'STALE_FENCING_TOKEN');
  assert.match(err.message, /4.*older.*5/);
  assert.equal((await e.info()).onloaded, false, 'a refused onload leaves the state offloaded');
  await expectCode(e.onload(3n), 'STALE_FENCING_TOKEN');
  await e.onload(5n); // the same holder re-onloading is fine
  await e.offload();
  await e.onload(2n ** 60n);
  assert.equal((await e.info()).lastFencingToken, 2n ** 60n);
  await e.offload();
  await expectCode(e.onload(Number.MAX_SAFE_INTEGER), 'STALE_FENCING_TOKEN');
  await e.close();
});

test('a budget overrun is an error with the numbers, and the engine survives it', async () => {
  const tooSmall = () =>
    createEngine({ device: { memoryBytes: 100_000 }, model: { preset: 'tiny' }, task: { name: 'addition' } });
  const err = await expectCode(tooSmall, 'BUDGET_EXCEEDED');
  assert.ok(
    err.needed! > 100_000 && err.available === 100_000,
    `needed ${err.needed}, available ${err.available}`,
  );
  assert.match(err.message, /needed \d+ bytes, available 100000 bytes/);

  // State fits, but a big batch's KV cache and activations do not.
  const e = createEngine({
    device: { memoryBytes: 1_200_000 },
    model: { preset: 'micro' },
    task: { name: 'addition' },
  });
  const big = await expectCode(e.rlStep({ generate: { numPrompts: 512, groupSize: 8 } }), 'BUDGET_EXCEEDED');
  assert.ok(big.needed! > big.available!);
  const ok = await e.generate({ numPrompts: 2, groupSize: 2 });
  assert.equal(ok.batch, 4);
  await e.close();
});
