/**
 * A temporal placement with partial rollouts: each step trains on the prompt groups that finished
 * and carries the rest, which the next step replays and finishes under newer weights. The job
 * reports how many groups it carried and the staleness of what it trained on (at most
 * `maxWeightLag`); without partial rollouts every token is on-policy. Real engine, real Redis lock.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { jobSpecSchema } from '../../common/job-spec.js';
import type { MetricPoint } from '../../common/jobs/reports.js';
import type { StageProfileReport } from '../../common/node-protocol/index.js';
import { stageDeviceMap } from '../../common/node-protocol/index.js';
import { fileRedis } from '../../test/helpers/redis.js';
import { stageLoopHarness } from '../stage-loop-harness.js';

const { lock } = fileRedis(after);

const STEPS = 6;
// Two letters and room for 13 tokens: an untrained model's completions end anywhere from 1 to 13,
// so every step has stragglers (the spec names the task; the engine's is the harness's).
const task = { name: 'reversal' as const, alphabet: 2, minLength: 3, maxLength: 12 };

async function run(
  partialTail?: number,
): Promise<{ m: Map<string, number[]>; profiles: StageProfileReport[] }> {
  const spec = jobSpecSchema.parse({
    name: 'partial',
    workflow: {
      mode: 'temporal',
      maxWeightLag: 1,
      task: { name: 'reversal', minLength: 3, maxLength: 12 },
      steps: STEPS,
      promptsPerStep: 16,
      groupSize: 4,
      checkpointEvery: 1_000_000,
      evalEvery: 1_000_000,
      warmup: { maxSteps: 0 },
      ...(partialTail === undefined ? {} : { partialTail }),
    },
  });
  const metrics: MetricPoint[] = [];
  const profiles: StageProfileReport[] = [];
  const h = await stageLoopHarness({
    spec,
    devices: [0],
    map: stageDeviceMap('temporal', [0]),
    ...(partialTail === undefined ? {} : { partialTail }),
    memoryBytes: 256 * 2 ** 20,
    // Room in the context for a carried completion beside a prompt and a new one.
    model: { dModel: 32, layers: 1, heads: 2, context: 64 },
    task,
    ...lock,
    report: (r) => {
      metrics.push(...r.metrics);
      profiles.push(...r.profiles);
    },
  });
  try {
    assert.equal((await h.loop.run()).outcome, 'succeeded');
  } finally {
    await h.close();
  }
  const byName = new Map<string, number[]>();
  for (const m of metrics) byName.set(m.name, [...(byName.get(m.name) ?? []), m.value]);
  return { m: byName, profiles };
}

/** What generation's profile rows say of stopping early (the cost model keeps those calls apart). */
const partialOf = (profiles: StageProfileReport[]) =>
  new Set(profiles.filter((p) => p.stage === 'generate').map((p) => p.partialTail));

test('partial rollouts carry unfinished groups into the next step, within the weight lag', async () => {
  const { m, profiles } = await run(0.25);
  assert.deepEqual(partialOf(profiles), new Set([0.25]));
  const carried = m.get('carried_groups') ?? [];
  assert.equal(carried.length, STEPS, 'one value per step');
  assert.ok(
    carried.some((c) => c > 0),
    `carried ${carried.join(',')}`,
  );
  // A quarter of the groups in flight: 16 fresh and at most 5 carried.
  assert.ok(
    carried.every((c) => c <= 5),
    `carried ${carried.join(',')}`,
  );
  const lag = m.get('weight_version_lag_max')!;
  assert.ok(
    lag.every((l) => l <= 1),
    `lag ${lag.join(',')}`,
  );
  assert.ok(
    lag.some((l) => l === 1),
    'replayed tokens are one version old',
  );
});

test('without partial rollouts nothing is carried and every token is on-policy', async () => {
  const { m, profiles } = await run();
  assert.deepEqual(partialOf(profiles), new Set([null]));
  assert.equal(m.get('carried_groups'), undefined);
  assert.ok(m.get('off_policy_token_fraction')!.every((f) => f === 0));
});
