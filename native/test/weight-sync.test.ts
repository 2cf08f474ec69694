import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { expectCode, microEngine, rlOptions } from './helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const shmName = (tag: string) => `/timeshare-test-${process.pid}-${tag}`;

test('a sequence that spans an in-flight weight update carries two weight versions', async () => {
  const trainer = microEngine({ seed: 1 });
  const generator = microEngine({ seed: 2 });
  await trainer.warmup({ maxSteps: 5, targetAccuracy: 1 });
  const pub = await trainer.publishWeights(shmName('inflight'));
  const attached = await generator.attachWeights(pub.name);
  assert.equal(attached.version, pub.version);

  // The trainer moves on and publishes; the generator only picks the new version up between decoding
  // steps, so the first token of every sequence is sampled under the old weights.
  await trainer.rlStep(rlOptions);
  const pub2 = await trainer.publishWeights(pub.name);
  assert.equal(pub2.version, pub.version + 1);
  const r = await generator.generate({ numPrompts: 16, groupSize: 2, maxNewTokens: 4, stopToken: 13 });
  assert.equal(r.inflightUpdates, 1);
  assert.equal(r.minVersion, pub.version);
  assert.equal(r.maxVersion, pub2.version);
  for (let b = 0; b < r.batch; b++) {
    const versions = [...r.versions.subarray(b * r.length + r.promptLength, (b + 1) * r.length)];
    assert.deepEqual(versions, [pub.version, pub2.version, pub2.version, pub2.version]);
  }
  assert.equal((await generator.info()).weightVersion, pub2.version);

  // Nothing newer: no update, one version.
  const again = await generator.generate({ numPrompts: 4, groupSize: 2 });
  assert.equal(again.inflightUpdates, 0);
  assert.equal(again.minVersion, again.maxVersion);
  await trainer.close();
  await generator.close();
});

test('another process maps the published weights without serialisation', async () => {
  const trainer = microEngine({ seed: 1 });
  await trainer.warmup({ maxSteps: 60, targetAccuracy: 1 });
  const pub = await trainer.publishWeights(shmName('xproc'));
  const mine = await trainer.evaluate({ limit: 50 });
  const out = execFileSync(
    process.execPath,
    ['--import', 'tsx', path.join(here, 'fixtures', 'attach-child.ts'), pub.name],
    { encoding: 'utf8' },
  );
  const child = JSON.parse(out.trim().split('\n').pop()!);
  assert.equal(child.version, pub.version);
  assert.equal(child.accuracy, mine.accuracy, 'same weights, same greedy answers');
  await trainer.close();
});

test('attaching to a missing or mismatched segment is a clear error', async () => {
  const e = microEngine();
  await expectCode(e.attachWeights('/timeshare-test-does-not-exist'), 'WEIGHT_SYNC_FAILED');
  const other = microEngine({ model: { dModel: 16, layers: 1, heads: 2 } });
  const pub = await other.publishWeights(shmName('mismatch'));
  await expectCode(e.attachWeights(pub.name), 'WEIGHT_SYNC_MISMATCH');
  await expectCode(() => e.attachWeights('no-slash'), 'INVALID_ARGUMENT');
  await e.close();
  await other.close();
});
