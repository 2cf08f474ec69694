import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, truncateSync, statSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { Engine } from '../index.js';
import { expectCode, microEngine, rlOptions, tempDir } from './helpers.js';

function header(file: string): Record<string, { dtype: string; shape: number[]; data_offsets: number[] }> {
  const buf = readFileSync(file);
  const n = Number(buf.readBigUInt64LE(0));
  return JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
}

test('save -> load -> continue is bit-exact against an uninterrupted run', async () => {
  const a = microEngine();
  await a.warmup({ maxSteps: 10, targetAccuracy: 1 });
  for (let i = 0; i < 2; i++) await a.rlStep(rlOptions);
  const mid = tempDir('ckpt-mid');
  await a.saveCheckpoint(mid);
  for (let i = 0; i < 3; i++) await a.rlStep(rlOptions);
  const endA = tempDir('ckpt-a');
  await a.saveCheckpoint(endA);

  const b = await Engine.fromCheckpoint(mid);
  for (let i = 0; i < 3; i++) await b.rlStep(rlOptions);
  const endB = tempDir('ckpt-b');
  await b.saveCheckpoint(endB);
  for (const f of ['model.safetensors', 'optimizer.safetensors'])
    assert.ok(readFileSync(path.join(endA, f)).equals(readFileSync(path.join(endB, f))), `${f} differs`);
  assert.equal((await a.info()).weightVersion, (await b.info()).weightVersion);
  await a.close();
  await b.close();
});

test('checkpoint files are safetensors with Hugging Face GPT-2 names and a JSON sidecar', async () => {
  const e = microEngine();
  const dir = tempDir('ckpt-format');
  await e.saveCheckpoint(dir);
  const h = header(path.join(dir, 'model.safetensors'));
  assert.deepEqual(h['transformer.h.0.attn.c_attn.weight']?.shape, [32, 96]);
  assert.equal(h['transformer.h.0.attn.c_attn.weight']?.dtype, 'F32');
  assert.deepEqual(h['lm_head.weight']?.shape, [14, 32]);
  assert.ok('__metadata__' in h);
  const o = header(path.join(dir, 'optimizer.safetensors'));
  assert.ok('exp_avg.transformer.wte.weight' in o && 'exp_avg_sq.lm_head.weight' in o);
  const sidecar = JSON.parse(readFileSync(path.join(dir, 'checkpoint.json'), 'utf8'));
  assert.equal(sidecar.optimizer, true);
  assert.equal(sidecar.model.dModel, 32);
  await e.close();
});

test('corrupt or truncated checkpoints are CORRUPT_CHECKPOINT and leave the engine intact', async () => {
  const e = microEngine();
  const good = tempDir('ckpt-good');
  await e.saveCheckpoint(good);
  const model = path.join(good, 'model.safetensors');
  const original = readFileSync(model);

  truncateSync(model, statSync(model).size - 7);
  await expectCode(e.loadCheckpoint(good), 'CORRUPT_CHECKPOINT');

  const garbled = Buffer.from(original);
  garbled.write('{"not json', 8);
  writeFileSync(model, garbled);
  await expectCode(e.loadCheckpoint(good), 'CORRUPT_CHECKPOINT');

  const hugeHeader = Buffer.from(original);
  hugeHeader.writeBigUInt64LE(2n ** 40n, 0);
  writeFileSync(model, hugeHeader);
  await expectCode(e.loadCheckpoint(good), 'CORRUPT_CHECKPOINT');

  writeFileSync(model, original);
  writeFileSync(path.join(good, 'checkpoint.json'), '{ nope');
  await expectCode(e.loadCheckpoint(good), 'CORRUPT_CHECKPOINT');
  await expectCode(Engine.fromCheckpoint(tempDir('empty')), 'CORRUPT_CHECKPOINT');

  const ev = await e.evaluate({ limit: 20 });
  assert.equal(ev.problems, 20, 'the engine still works after refused loads');
  await e.close();
});
