// npm run bench:pipeline — steps/s of one spatial job at weight lag 0 (on-policy) with
// microBatches = 1, 2 and 4, through the real StageLoop: two engines, the Redis device lock, every
// micro-batch stage under its own hold. Configurations alternate round by round so that load
// drift on a shared machine hits them alike; the figure is the median over rounds.
//
// Steps/s counts steps 2..N from the `step_seconds` metric (publish to publish), so engine
// creation, the first sync and the final evaluation stay out of it.
import { stageDeviceMap } from '../../common/node-protocol/index.js';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

import { jobSpecSchema } from '../../common/job-spec.js';
import type { MetricPoint, StageProfileReport } from '../../common/jobs/reports.js';
import { deleteKeys } from '../../test/helpers/redis.js';
import { stageLoopHarness } from '../stage-loop-harness.js';

const STEPS = Number(process.env.BENCH_STEPS ?? 12);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const THREADS = Number(process.env.BENCH_THREADS_PER_DEVICE ?? 1);
const PROMPTS = Number(process.env.BENCH_PROMPTS ?? 64);
const GROUP = 8;
const MICRO = (process.env.BENCH_MICRO_BATCHES ?? '1,2,4').split(',').map(Number);
const PRESET = (process.env.BENCH_PRESET ?? 'tiny') as 'micro' | 'tiny' | 'small';
// addition (default): training dominates a step; reversal of 6-12 letters: generation dominates.
const TASK =
  process.env.BENCH_TASK === 'reversal'
    ? ({ name: 'reversal', minLength: 6, maxLength: 12 } as const)
    : ({ name: 'addition', digits: 2 } as const);
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const MEMORY = 512 * 2 ** 20;

interface Run {
  stepsPerSecond: number;
  overlapSeconds: number;
  /** Per step: seconds the generate / train holds lasted (summed over micro-batches). */
  generateSeconds: number;
  trainSeconds: number;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function runOnce(microBatches: number, redis: Redis): Promise<Run> {
  const spec = jobSpecSchema.parse({
    name: 'pipeline-bench',
    resources: { devices: 2 },
    workflow: {
      mode: 'spatial',
      algorithm: 'grpo',
      maxWeightLag: 0,
      microBatches,
      model: { preset: PRESET },
      task: TASK,
      steps: STEPS,
      promptsPerStep: PROMPTS,
      groupSize: GROUP,
      checkpointEvery: 1_000_000,
      evalEvery: 1_000_000,
      warmup: { maxSteps: 0 },
    },
  });
  const metrics: MetricPoint[] = [];
  const profiles: StageProfileReport[] = [];
  const lockPrefix = `bench-pipeline-${randomBytes(4).toString('hex')}`;
  const h = await stageLoopHarness({
    spec,
    devices: [0, 1],
    map: stageDeviceMap('spatial', [0, 1]),
    threadsPerDevice: THREADS,
    memoryBytes: MEMORY,
    model: { preset: PRESET },
    task: TASK,
    redis,
    redisUrl: url,
    lockPrefix,
    leaseMs: 5000,
    report: (r) => {
      metrics.push(...r.metrics);
      profiles.push(...r.profiles);
    },
  });
  const result = await h.loop.run();
  await h.close();
  // The lock's keys go with the run.
  await deleteKeys(lockPrefix, url);
  if (result.outcome !== 'succeeded') throw new Error(`bench job ended ${result.outcome}: ${result.error}`);
  const per = (name: string) => metrics.filter((m) => m.name === name && m.step >= 2).map((m) => m.value);
  const steps = per('step_seconds');
  const held = (stage: string) =>
    sum(profiles.filter((p) => p.stage === stage && (p.step ?? 0) >= 2).map((p) => p.seconds)) / steps.length;
  return {
    stepsPerSecond: steps.length / sum(steps),
    generateSeconds: held('generate'),
    trainSeconds: held('train'),
    overlapSeconds: sum(per('pipeline_overlap_seconds')) / steps.length,
  };
}

const redis = new Redis(url, { maxRetriesPerRequest: 3 });
console.log(
  `pipeline bench: spatial, lag 0, ${PRESET} model, task ${JSON.stringify(TASK)}, ${PROMPTS} prompts x ${GROUP} per step, ` +
    `${THREADS} thread(s) per device, steps 2..${STEPS}, ${ROUNDS} round(s)\n`,
);
const runs = new Map<number, Run[]>(MICRO.map((m) => [m, []]));
for (let round = 0; round < ROUNDS; round++)
  for (const m of round % 2 ? [...MICRO].reverse() : MICRO) runs.get(m)!.push(await runOnce(m, redis));
const base = median(runs.get(MICRO[0]!)!.map((r) => r.stepsPerSecond));
console.log(
  'microBatches   steps/s (median)   per round                  generate s/step  train s/step  overlap s/step   vs first',
);
for (const m of MICRO) {
  const rs = runs.get(m)!;
  const sps = median(rs.map((r) => r.stepsPerSecond));
  console.log(
    `${String(m).padEnd(14)} ${sps.toFixed(3).padEnd(18)} ${rs
      .map((r) => r.stepsPerSecond.toFixed(3))
      .join(' ')
      .padEnd(26)} ${median(rs.map((r) => r.generateSeconds))
      .toFixed(3)
      .padEnd(16)} ${median(rs.map((r) => r.trainSeconds))
      .toFixed(3)
      .padEnd(13)} ${median(rs.map((r) => r.overlapSeconds))
      .toFixed(3)
      .padEnd(16)} ${(sps / base).toFixed(2)}x`,
  );
}
redis.disconnect();
