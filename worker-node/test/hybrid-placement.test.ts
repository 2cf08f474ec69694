/**
 * A hybrid placement runs: generation on both devices, training on one of them, the shared device
 * taken in turns under the device lock. Real engines, the real Redis lock; the lock's own timeline
 * shows the two stages alternating on the shared device and never holding it at once.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { jobSpecSchema } from '../../common/job-spec.js';
import type { StageProfileReport } from '../../common/jobs/reports.js';
import { stageDeviceMap } from '../../common/node-protocol/index.js';
import { fileRedis } from '../../test/helpers/redis.js';
import { stageLoopHarness } from '../stage-loop-harness.js';

const { lock } = fileRedis(after);

const STEPS = 4;
const MEMORY = 256 * 2 ** 20;

test('a hybrid placement generates on every device and trains on part of them, taking turns on the shared one', async () => {
  const spec = jobSpecSchema.parse({
    name: 'hybrid',
    resources: { devices: 2 },
    workflow: {
      mode: 'hybrid',
      microBatches: 2,
      task: { name: 'addition', digits: 1 },
      steps: STEPS,
      promptsPerStep: 8,
      groupSize: 4,
      checkpointEvery: 1_000_000,
      evalEvery: 1_000_000,
      warmup: { maxSteps: 0 },
    },
  });
  const map = stageDeviceMap('hybrid', [0, 1], { generate: 2, train: 1 });
  assert.deepEqual(map.stages, { generate: [0, 1], train: [1] });
  const profiles: StageProfileReport[] = [];
  const h = await stageLoopHarness({
    spec,
    devices: [0, 1],
    map,
    microBatches: 2,
    memoryBytes: MEMORY,
    model: { preset: 'micro' },
    task: { name: 'addition', digits: 1 },
    ...lock,
    report: (r) => void profiles.push(...r.profiles),
  });
  const { start, locks } = h;
  const nodeId = start.nodeId;
  let intervals;
  try {
    assert.equal((await h.loop.run()).outcome, 'succeeded');
    intervals = (await locks.readTimeline({})).intervals;
  } finally {
    await h.close();
  }
  const gen = profiles.filter((p) => p.stage === 'generate');
  const train = profiles.filter((p) => p.stage === 'train');
  assert.equal(gen.length, STEPS * 2, 'one generation hold per micro-batch');
  assert.equal(train.length, STEPS * 2, 'one training hold per micro-batch');
  assert.ok(gen.every((p) => p.devices === 2) && train.every((p) => p.devices === 1));

  const shared = intervals.filter((i) => i.device === `${nodeId}/1` && i.job === start.jobId);
  const onlyGen = intervals.filter((i) => i.device === `${nodeId}/0`);
  assert.ok(
    onlyGen.every((i) => i.stage === 'generate' || i.stage === 'sync'),
    'device 0 never trains',
  );
  const stages = shared.map((i) => i.stage).filter((s) => s === 'generate' || s === 'train');
  assert.ok(stages.includes('generate') && stages.includes('train'), 'both stages ran on the shared device');
  const switches = stages.filter((s, k) => k > 0 && s !== stages[k - 1]).length;
  assert.ok(switches >= STEPS, `the shared device alternated between stages (${switches} switches)`);
  const sorted = [...shared].sort((a, b) => a.start - b.start);
  for (let k = 1; k < sorted.length; k++)
    assert.ok(sorted[k]!.start >= sorted[k - 1]!.end!, 'holds on the shared device never overlap');
});
