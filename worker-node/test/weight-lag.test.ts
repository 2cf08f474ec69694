/**
 * The weight lag a spatial job reports is the staleness its learner trains on. With a generator
 * faster than the learner, `maxWeightLag` 2 lets generation run two steps ahead: the reported lag
 * reaches 2 and never exceeds it; with `maxWeightLag` 0 it stays 0. Real engines and the real
 * Redis device lock; only the learner is slowed down, so that the generator is surely faster.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { jobSpecSchema } from '../../common/job-spec.js';
import type { MetricPoint } from '../../common/jobs/reports.js';
import { stageDeviceMap } from '../../common/node-protocol/index.js';
import { fileRedis } from '../../test/helpers/redis.js';
import { stageLoopHarness } from '../stage-loop-harness.js';
import { stalenessOf } from '../../common/staleness.js';

const { lock } = fileRedis(after);

const STEPS = 16;
const MEMORY = 256 * 2 ** 20;

async function run(maxWeightLag: number): Promise<Map<string, Map<number, number>>> {
  const spec = jobSpecSchema.parse({
    name: 'lag',
    resources: { devices: 2 },
    workflow: {
      mode: 'spatial',
      maxWeightLag,
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
  const metrics: MetricPoint[] = [];
  const h = await stageLoopHarness({
    spec,
    devices: [0, 1],
    map: stageDeviceMap('spatial', [0, 1]),
    memoryBytes: MEMORY,
    model: { preset: 'micro' },
    task: { name: 'addition', digits: 1 },
    ...lock,
    report: (r) => void metrics.push(...r.metrics),
  });
  const train = h.engine.train.bind(h.engine);
  h.engine.train = async (o) => {
    await new Promise((r) => setTimeout(r, 60));
    return train(o);
  };
  try {
    assert.equal((await h.loop.run()).outcome, 'succeeded');
  } finally {
    await h.close();
  }
  const byName = new Map<string, Map<number, number>>();
  for (const m of metrics) {
    if (!byName.has(m.name)) byName.set(m.name, new Map());
    byName.get(m.name)!.set(m.step, m.value);
  }
  return byName;
}

test('staleness is the learner version minus each generated token version', () => {
  const s = stalenessOf(7, Int32Array.from([-1, -1, 7, 6, 5, -1]));
  assert.deepEqual(s, { max: 2, sum: 3, tokens: 3, offPolicy: 2 });
});

for (const maxWeightLag of [0, 2])
  test(`a generator faster than the learner: the reported lag reaches ${maxWeightLag} and never exceeds it`, async () => {
    const m = await run(maxWeightLag);
    const max = [...m.get('weight_version_lag_max')!.values()];
    const mean = [...m.get('weight_version_lag_mean')!.values()];
    assert.equal(max.length, STEPS, 'one value per step');
    assert.deepEqual(
      [...m.get('weight_version_lag')!.entries()],
      [...m.get('weight_version_lag_max')!.entries()],
      'weight_version_lag keeps meaning the maximum',
    );
    assert.ok(
      max.every((v) => v <= maxWeightLag),
      `never above the bound: ${max}`,
    );
    assert.equal(Math.max(...max), maxWeightLag, `the generator ran ahead as far as allowed: ${max}`);
    assert.ok(mean.every((v, i) => v >= 0 && v <= max[i]!));
    const offPolicy = [...m.get('off_policy_token_fraction')!.values()];
    assert.equal(
      offPolicy.some((v) => v > 0),
      maxWeightLag > 0,
    );
  });
