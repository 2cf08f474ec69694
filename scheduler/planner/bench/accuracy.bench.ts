/**
 * bench:planner (2/2) — does the cost model predict real runs? For the tiny and small presets and
 * each mode (temporal, spatial, hybrid) on 2 devices (1 engine thread each), a job runs through the
 * real StageLoop (engines, the Redis device lock, a hold per stage); after 5 profiled steps its
 * profile rows go to the planner as the scheduler would read them, and the predicted step time is
 * set beside the mean step time the job then measures over the next steps. Target: within 20%.
 *
 * Evaluation and checkpoints are kept out of the run (a periodic cost the model does not price yet).
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { stageDeviceMap, type PlacementMode } from '../../../common/node-protocol/index.js';
import { jobSpecSchema } from '../../../common/job-spec.js';
import { deleteKeys } from '../../../test/helpers/redis.js';
import { stageLoopHarness } from '../../../worker-node/stage-loop-harness.js';
import { workloadOf } from '../../rounds/read-snapshot.js';
import { costModelOf, planJob } from '../plan-job.js';
import { candidatePlans } from '../explain.js';
import type { ProfileSummary } from '../../core/types.js';
import { summarize, type ProfileRow } from '../profile-summary.js';

const PROFILED = 5;
const MEASURED = Number(process.env.BENCH_MEASURED_STEPS ?? 10);
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const MEMORY = 512 * 2 ** 20;
const TASK = { name: 'addition', digits: 2 } as const;

interface Result {
  predicted: number;
  measured: number;
  plan: string;
  explain: string[];
}

async function run(preset: 'tiny' | 'small', mode: PlacementMode, redis: Redis): Promise<Result> {
  const workflow = {
    mode,
    algorithm: 'grpo',
    maxWeightLag: 1,
    microBatches: mode === 'temporal' ? 1 : 4,
    model: { preset },
    task: TASK,
    steps: 1 + PROFILED + MEASURED,
    promptsPerStep: 64,
    groupSize: 8,
    checkpointEvery: 1_000_000,
    evalEvery: 1_000_000,
    warmup: { maxSteps: 0 },
  } as const;
  const spec = jobSpecSchema.parse({ name: 'planner-accuracy', resources: { devices: 2 }, workflow });
  // What the scheduler would decide for this request before any profile.
  const prior = planJob({
    workload: workloadOf(workflow),
    devices: 2,
    maxDevices: 2,
    memoryPerDeviceBytes: null,
    profile: null,
  });
  const rows: ProfileRow[] = [];
  const stepDone = new Map<number, number>();
  const lockPrefix = `bench-planner-${randomBytes(4).toString('hex')}`;
  const h = await stageLoopHarness({
    spec,
    devices: [0, 1],
    map: stageDeviceMap(mode, [0, 1], { generate: prior.generateDevices, train: prior.trainDevices }),
    microBatches: prior.microBatches,
    memoryBytes: MEMORY,
    model: { preset },
    task: TASK,
    redis,
    redisUrl: url,
    lockPrefix,
    leaseMs: 5000,
    report: (r) => {
      for (const p of r.profiles) rows.push({ ...p, step: p.step ?? null });
      for (const m of r.metrics) if (m.name === 'reward_mean') stepDone.set(m.step, performance.now());
    },
  });
  const { start } = h;
  const result = await h.loop.run();
  await h.close();
  // The lock's keys go with the run.
  await deleteKeys(lockPrefix, url);
  if (result.outcome !== 'succeeded') throw new Error(`bench job ended ${result.outcome}: ${result.error}`);
  // Step 1 pays the first sync and cold caches; steps 2..6 are the profile, 7.. the measurement.
  const profiled = rows.filter((r) => r.step !== null && r.step >= 2 && r.step <= 1 + PROFILED);
  const wall = (stepDone.get(1 + PROFILED)! - stepDone.get(1)!) / 1000;
  const profile = summarize(profiled, wall);
  const plan = planJob({
    workload: { ...workloadOf(workflow), mode, microBatches: start.placement.microBatches ?? 1 },
    devices: 2,
    maxDevices: 2,
    memoryPerDeviceBytes: null,
    profile,
  });
  const measured = (stepDone.get(1 + PROFILED + MEASURED)! - stepDone.get(1 + PROFILED)!) / 1000 / MEASURED;
  return {
    predicted: plan.stepSeconds,
    measured,
    plan: `${plan.mode} g${plan.generateDevices}/t${plan.trainDevices} m${plan.microBatches}`,
    explain: explain(workflow, profile!),
  };
}

/** The worked example: what the job measured, what the model made of it, and what it chose among. */
function explain(workflow: Parameters<typeof workloadOf>[0], profile: ProfileSummary): string[] {
  const w = { ...workloadOf(workflow), mode: 'auto' as const };
  const model = costModelOf({ workload: w, profile });
  const lines = profile.stages!.map(
    (s) =>
      `  measured ${s.stage.padEnd(8)} batch ${s.batch} on ${s.devices} device(s): ${(1000 * s.computeSeconds).toFixed(1)} ms compute, ${(1000 * s.switchSeconds).toFixed(1)} ms onload+offload (mean of ${s.count} within 3× their median)`,
  );
  for (const stage of ['generate', 'train']) {
    const c = model.stage(stage).coefficients;
    lines.push(
      `  fitted   ${stage.padEnd(8)} t(b, n) = ${(1000 * c.fixed).toFixed(2)} ms + ${(1e6 * c.parallel).toFixed(1)} µs·b/n + ${(1e6 * c.serial).toFixed(1)} µs·b`,
    );
  }
  for (const c of candidatePlans(model, w, 2))
    lines.push(`  ${(1000 * c.stepSeconds).toFixed(1).padStart(7)} ms/step  ${c.label}`);
  return lines;
}

const redis = new Redis(url, { maxRetriesPerRequest: 3 });
console.log(
  `bench:planner accuracy: 2 devices × 1 thread, addition, 64 prompts × 8, predicted after ${PROFILED} profiled steps vs mean of the next ${MEASURED}\n`,
);
console.log('preset  mode       plan                predicted s/step   measured s/step   error   within 20%');
let worst = 0;
const examples: string[] = [];
const PRESETS = (process.env.BENCH_PRESETS ?? 'tiny,small').split(',') as ('tiny' | 'small')[];
const MODES = (process.env.BENCH_MODES ?? 'temporal,spatial,hybrid').split(',') as PlacementMode[];
for (const preset of PRESETS)
  for (const mode of MODES) {
    const r = await run(preset, mode, redis);
    const err = r.predicted / r.measured - 1;
    if (mode === 'temporal') examples.push(`${preset}, run temporal:`, ...r.explain);
    worst = Math.max(worst, Math.abs(err));
    console.log(
      `${preset.padEnd(7)} ${mode.padEnd(10)} ${r.plan.padEnd(19)} ${r.predicted.toFixed(4).padStart(16)}   ${r.measured.toFixed(4).padStart(15)}   ${(100 * err).toFixed(1).padStart(5)}%   ${Math.abs(err) <= 0.2 ? 'yes' : 'NO'}`,
    );
  }
console.log(`\nHow the plan is chosen (2 devices), from each preset's temporal run:\n${examples.join('\n')}`);
console.log(`\nworst error ${(100 * worst).toFixed(1)}% (target ≤ 20%): ${worst <= 0.2 ? 'PASS' : 'FAIL'}`);
redis.disconnect();
