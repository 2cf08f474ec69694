// npm test: alone (it measures step times before and after a move: scripts/run-tests.mjs runs it once both lanes are done).
/**
 * The reactive balancer through the real stage loop: real engines, the real Redis device lock, a
 * spatial placement on 4 devices with a deliberately bad split (3 generate, 1 trains) for a job
 * whose training is the heavy side. The balancer must move a device to training (and never back), report `job.rebalanced` with the split before and after and then
 * `job.rebalance_measured`, and the steps after the move must be faster.
 *
 * Two shared cores cannot show engines getting faster with more threads (the other work on the
 * machine takes them), so each engine is wrapped with a stand-in for its devices: a delay of a
 * fixed amount of work divided by its device count, added to every real call. The balancer only
 * sees what it measures, as it would on real devices.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { jobSpecSchema } from '../../common/job-spec.js';
import type { MetricPoint } from '../../common/jobs/reports.js';
import type { NodeJobEvent } from '../../common/node-protocol/index.js';
import { stageDeviceMap } from '../../common/node-protocol/index.js';
import { fileRedis } from '../../test/helpers/redis.js';
import { emulateDevices } from '../emulated-devices.js';
import { stageLoopHarness, type HarnessOptions } from '../stage-loop-harness.js';

const { lock } = fileRedis(after);

/** Milliseconds of emulated device work per micro-batch on one device. */
const TRAIN_WORK_MS = 240;
const GENERATE_WORK_MS = 90;
const STEPS = 14;
/**
 * The first test compares measured step times around moves; a 5-step window (the default is 3)
 * lets one stall of a loaded machine weigh less in them, with the same decisions.
 */
const MEASURED = { windowSteps: 5, cooldownSteps: 6 } as const;
const MEASURED_STEPS = 20;

/** Devices whose speed adds up, the training side the heavier (the worker's test-only emulation). */
const withDevices: HarnessOptions['wrap'] = (e, role, n) =>
  emulateDevices(e, role, n, 'rebalance', {
    TIMESHARE_TEST_DEVICE_WORK: `${GENERATE_WORK_MS}:${TRAIN_WORK_MS}`,
  });

function specOf(steps: number) {
  return jobSpecSchema.parse({
    name: 'rebalance',
    resources: { devices: 4 },
    workflow: {
      mode: 'spatial',
      maxWeightLag: 1,
      microBatches: 2,
      task: { name: 'addition', digits: 1 },
      steps,
      promptsPerStep: 8,
      groupSize: 4,
      checkpointEvery: 1_000_000,
      evalEvery: 1_000_000,
      warmup: { maxSteps: 0 },
    },
  });
}

function harness(
  steps: number,
  report: HarnessOptions['report'],
  saveCheckpoint?: HarnessOptions['saveCheckpoint'],
  placed: { split: { generate: number; train: number }; wrap: HarnessOptions['wrap'] } = {
    split: { generate: 3, train: 1 },
    wrap: withDevices,
  },
  balancer?: HarnessOptions['balancer'],
) {
  const devices = [0, 1, 2, 3];
  return stageLoopHarness({
    spec: specOf(steps),
    devices,
    map: stageDeviceMap('spatial', devices, placed.split),
    memoryBytes: 256 * 2 ** 20,
    model: { preset: 'micro' },
    task: { name: 'addition', digits: 1 },
    ...lock,
    report,
    wrap: placed.wrap,
    ...(saveCheckpoint ? { saveCheckpoint } : {}),
    ...(balancer ? { balancer } : {}),
  });
}

test('a train-bound spatial job on a 3/1 split gets a device moved to training, and its steps get faster', async () => {
  const metrics: MetricPoint[] = [];
  const events: NodeJobEvent[] = [];
  const h = await harness(
    MEASURED_STEPS,
    (r) => {
      metrics.push(...r.metrics);
      events.push(...(r.events ?? []));
    },
    undefined,
    undefined,
    MEASURED,
  );
  assert.deepEqual(h.start.placement.stages, { generate: [0, 1, 2], train: [3] });
  try {
    assert.equal((await h.loop.run()).outcome, 'succeeded');
  } finally {
    await h.close();
  }

  const moves = events.filter((e) => e.type === 'job.rebalanced');
  assert.ok(moves.length >= 1, `a move happened: ${JSON.stringify(events)}`);
  const first = moves[0]!;
  assert.deepEqual(first.from, { generate: 3, train: 1 });
  assert.deepEqual(first.to, { generate: 2, train: 2 }, 'one device, from generation to training');
  assert.deepEqual(first.stages, { generate: [0, 1], train: [2, 3] });
  assert.ok(first.imbalance < -0.25, `training measured over-loaded: ${first.imbalance}`);
  assert.ok(first.moveSeconds > 0);
  for (const m of moves)
    assert.ok(m.to.train === m.from.train + 1, `never moved back to generation: ${JSON.stringify(moves)}`);

  const measured = events.filter((e) => e.type === 'job.rebalance_measured');
  assert.ok(measured.length >= 1, `the step time after the move was measured: ${JSON.stringify(events)}`);
  for (const [i, m] of measured.entries()) {
    const move = moves[i]!;
    console.log(
      `rebalance ${move.from.generate}/${move.from.train} → ${move.to.generate}/${move.to.train}: ` +
        `imbalance ${move.imbalance.toFixed(2)} → ${m.imbalance.toFixed(2)}, step ${m.stepSecondsBefore.toFixed(3)} s → ` +
        `${m.stepSecondsAfter.toFixed(3)} s (predicted ${move.predictedStepSeconds.toFixed(3)} s), ` +
        `move ${move.moveSeconds.toFixed(3)} s`,
    );
  }
  // The first move halves the bottleneck's emulated work (480 → 240 ms a step): faster by far more
  // than load can hide. A later move towards balance gains less (~20%), and this file runs beside
  // the system tests at a lower CPU priority, where real compute on one thread can take that back
  // (a CI run measured 0.267 → 0.305 s after 2/2 → 1/3): later moves are held to the whole run's
  // gain instead, from the first measured step to the last.
  const [firstMeasured, lastMeasured] = [measured[0]!, measured.at(-1)!];
  assert.ok(
    firstMeasured.stepSecondsAfter < 0.75 * firstMeasured.stepSecondsBefore,
    `faster after the first move: ${firstMeasured.stepSecondsBefore} → ${firstMeasured.stepSecondsAfter}`,
  );
  assert.ok(
    lastMeasured.stepSecondsAfter < 0.75 * firstMeasured.stepSecondsBefore,
    `faster after the last move than before the first: ${firstMeasured.stepSecondsBefore} → ${lastMeasured.stepSecondsAfter}`,
  );
  // 3/1 → 2/2 → 1/3 here (generation 90/n ms, training 240/n ms a micro-batch), then balanced.
  const genDevices = metrics.filter((m) => m.name === 'generate_devices').map((m) => m.value);
  assert.equal(genDevices[0], 3);
  assert.equal(genDevices.at(-1), moves.at(-1)!.to.generate);
  assert.equal(
    metrics.filter((m) => m.name === 'reward_mean').length,
    MEASURED_STEPS,
    'every step trained once',
  );
});

test('a preemption right after a move checkpoints from the restarted learner on its new devices', async () => {
  const events: NodeJobEvent[] = [];
  const holds: { stage: string; devices: number }[] = [];
  const saved: number[] = [];
  const h = await harness(
    STEPS,
    (r) => {
      events.push(...(r.events ?? []));
      holds.push(...r.profiles.map((p) => ({ stage: p.stage, devices: p.devices })));
      if (r.events?.some((e) => e.type === 'job.rebalanced')) h.loop.requestStop('preempt');
    },
    async (step, engine) => {
      assert.equal((await engine.info()).threads, 2, 'the learner restarted on 2 devices saves');
      saved.push(step);
      return { step, sizeBytes: 0, sha256: '0'.repeat(64), meta: {} };
    },
  );
  try {
    assert.equal((await h.loop.run()).outcome, 'preempted');
  } finally {
    await h.close();
  }
  const move = events.find((e) => e.type === 'job.rebalanced')!;
  assert.deepEqual(move.to, { generate: 2, train: 2 });
  assert.deepEqual(saved, [move.step], 'the last completed step, once');
  assert.deepEqual(holds.at(-1), { stage: 'checkpoint', devices: 2 });
  assert.ok(
    holds.some((x) => x.stage === 'rebalance' && x.devices === 4),
    'the move held all 4 devices',
  );
});

test('a generation-bound job on a 1/3 split gets devices moved to generation, its restarted engines fenced by their own devices', async () => {
  // Fencing tokens grow per device from different starts: an engine restarted on other devices
  // must be onloaded with the highest token of its own devices, not of all the job's, or its next
  // hold's token looks stale (the job process died on the first move towards generation).
  const events: NodeJobEvent[] = [];
  // The reverse of `withDevices`: generation is the heavy side.
  const generationBound: HarnessOptions['wrap'] = (e, role, n) =>
    emulateDevices(e, role, n, 'rebalance', {
      TIMESHARE_TEST_DEVICE_WORK: `${TRAIN_WORK_MS}:${GENERATE_WORK_MS}`,
    });
  const h = await harness(STEPS, (r) => void events.push(...(r.events ?? [])), undefined, {
    split: { generate: 1, train: 3 },
    wrap: generationBound,
  });
  try {
    assert.equal((await h.loop.run()).outcome, 'succeeded');
  } finally {
    await h.close();
  }
  const moves = events.filter((e) => e.type === 'job.rebalanced');
  assert.ok(moves.length >= 1, `a move happened: ${JSON.stringify(events)}`);
  assert.deepEqual(moves[0]!.from, { generate: 1, train: 3 });
  assert.deepEqual(moves[0]!.to, { generate: 2, train: 2 });
  for (const m of moves) assert.equal(m.to.generate, m.from.generate + 1, JSON.stringify(moves));
});
