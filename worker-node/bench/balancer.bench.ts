// npm run bench:balancer — the reactive balancer (worker-node/balancer.ts) on a spatial job through
// the real StageLoop (real engines, the Redis device lock), 4 devices placed with a bad split:
// 3 generate, 1 trains, for a job whose training is the heavy side.
//
//   emulated  each engine call also waits a fixed amount of work divided by its device count, so
//             devices add up as they would on accelerators (two shared cores cannot show it: more
//             engine threads here are slower under load, bench:engine). Run with the balancer on,
//             off (stays 3/1), and off from the split it converges to (1/3), for reference.
//   raw       the engine alone, 1 thread per device: what this machine's cores do with the moves.
//
// Printed per move: imbalance before → after, step seconds before → after (the balancer's own
// window of 3 steps), its prediction, and the measured cost of the move (generator paused, both
// engines restarted from a checkpoint of the learner under one hold of all 4 devices).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { jobSpecSchema } from '../../common/job-spec.js';
import type { MetricPoint } from '../../common/jobs/reports.js';
import { stageDeviceMap, type NodeJobEvent } from '../../common/node-protocol/index.js';
import type { Engine } from '../../native/index.js';
import { deleteKeys } from '../../test/helpers/redis.js';
import { stageLoopHarness } from '../stage-loop-harness.js';

const STEPS = Number(process.env.BENCH_STEPS ?? 20);
const PRESET = (process.env.BENCH_PRESET ?? 'tiny') as 'micro' | 'tiny' | 'small';
const TRAIN_WORK_MS = 240;
const GENERATE_WORK_MS = 90;
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function emulated(e: Engine, role: 'learner' | 'generator', devices: number): Engine {
  if (role === 'learner') {
    const train = e.train.bind(e);
    e.train = async (o) => (await sleep(TRAIN_WORK_MS / devices), train(o));
  } else {
    const generate = e.generate.bind(e);
    e.generate = async (o) => (await sleep(GENERATE_WORK_MS / devices), generate(o));
  }
  return e;
}

async function run(
  redis: Redis,
  prefix: string,
  o: { split: { generate: number; train: number }; balancer: boolean; emulate: boolean },
) {
  const spec = jobSpecSchema.parse({
    name: 'balancer-bench',
    resources: { devices: 4 },
    workflow: {
      mode: 'spatial',
      maxWeightLag: 1,
      microBatches: 2,
      model: { preset: PRESET },
      task: { name: 'addition', digits: 2 },
      steps: STEPS,
      promptsPerStep: 16,
      groupSize: 8,
      checkpointEvery: 1_000_000,
      evalEvery: 1_000_000,
      warmup: { maxSteps: 0 },
    },
  });
  const metrics: MetricPoint[] = [];
  const events: NodeJobEvent[] = [];
  const devices = [0, 1, 2, 3];
  const h = await stageLoopHarness({
    spec,
    devices,
    map: stageDeviceMap('spatial', devices, o.split),
    memoryBytes: 512 * 2 ** 20,
    model: { preset: PRESET },
    task: { name: 'addition', digits: 2 },
    redis,
    redisUrl: url,
    lockPrefix: `${prefix}:lock`,
    leaseMs: 60_000,
    report: (r) => {
      metrics.push(...r.metrics);
      events.push(...(r.events ?? []));
    },
    balancer: o.balancer ? {} : 'off',
    ...(o.emulate ? { wrap: emulated } : {}),
  });
  const t0 = performance.now();
  try {
    await h.loop.run();
  } finally {
    await h.close();
  }
  const wall = (performance.now() - t0) / 1000;
  const steps = metrics.filter((m) => m.name === 'step_seconds').map((m) => m.value);
  const last = steps.slice(-5);
  return { wall, lastStepSeconds: last.reduce((a, b) => a + b, 0) / last.length, events };
}

function printMoves(events: NodeJobEvent[]) {
  const moves = events.filter((e) => e.type === 'job.rebalanced');
  const measured = events.filter((e) => e.type === 'job.rebalance_measured');
  if (!moves.length) console.log('    no move');
  moves.forEach((m, i) => {
    const after = measured[i];
    console.log(
      `    step ${m.step}: ${m.from.generate}/${m.from.train} → ${m.to.generate}/${m.to.train}  ` +
        `imbalance ${m.imbalance.toFixed(2)} → ${after ? after.imbalance.toFixed(2) : '?'}  ` +
        `step ${m.stepSecondsBefore.toFixed(3)} s → ${after ? after.stepSecondsAfter.toFixed(3) : '?'} s ` +
        `(predicted ${m.predictedStepSeconds.toFixed(3)} s)  move ${(m.moveSeconds * 1000).toFixed(1)} ms`,
    );
  });
}

async function main() {
  const redis = new Redis(url, { maxRetriesPerRequest: 3 });
  const prefix = `bench-balancer-${randomBytes(4).toString('hex')}`;
  try {
    console.log(`reactive balancer: ${PRESET} preset, 4 devices, ${STEPS} steps, 2 micro-batches, lag 1`);
    for (const emulate of [true, false]) {
      console.log(
        emulate
          ? `\nemulated devices (training ${TRAIN_WORK_MS}/n ms, generation ${GENERATE_WORK_MS}/n ms a micro-batch)`
          : '\nraw engine, 1 thread per device',
      );
      const configs = [
        { label: 'from 3/1, balancer on ', split: { generate: 3, train: 1 }, balancer: true },
        { label: 'from 3/1, balancer off', split: { generate: 3, train: 1 }, balancer: false },
        { label: 'at 1/3, balancer off  ', split: { generate: 1, train: 3 }, balancer: false },
      ];
      for (const c of configs) {
        const r = await run(redis, prefix, { ...c, emulate });
        console.log(
          `  ${c.label}  wall ${r.wall.toFixed(2)} s  last 5 steps ${r.lastStepSeconds.toFixed(3)} s/step`,
        );
        if (c.balancer) printMoves(r.events);
      }
    }
  } finally {
    await deleteKeys(prefix);
    redis.disconnect();
  }
}

await main();
