// npm test: alone (it measures step times: scripts/run-tests.mjs runs it once the other lane is done).
/**
 * Issue 12, end to end: re-planning a running `auto` job through the real stack and engine.
 *
 * At 2 devices this engine never gets another plan (training is ~85% of a temporal step, so the
 * model always prefers temporal: docs/planner.md), so the jobs run on 8 virtual devices of one
 * thread, where spatial (generation on 1, training on 7, 2 micro-batches) and temporal are close.
 * - A job whose completions grow longer (TIMESHARE_TEST_LONG_COMPLETIONS: after step 2, every
 *   completion runs to 24 tokens) starts temporal on the prior; its measured steps (the first two
 *   are warm-up and not fitted) give generation a larger share and the model comes to prefer
 *   spatial, and once the gain over the remaining steps beats the move it is moved in place:
 *   exactly one `job.replanned`, a `replan` preemption, a resume from its checkpoint in the new
 *   plan on the same devices, and `job.replan_measured` with the measured gain. (With the shift at
 *   step 8, the short steps before it priced spatial 12–15% faster in one CI run in four, moving
 *   the job before its profile shifted, and it then measured slower.)
 * - A job close to its end whose profile favours another plan (the same lengthening completions, 12
 *   steps) is declined and never preempted.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestTenant } from '../helpers/api-harness.js';
import { checkpointSteps, eventsOf, startCluster, waitForStatus, type Cluster } from '../helpers/cluster.js';

let c: Cluster;
before(async () => {
  c = await startCluster({
    maxJobsPerDevice: 1,
    // 8 engine threads on a 2-core machine: a margin for slow heartbeats (under 1 s apart in the DB
    // when measured). The 30 s without one seen before were heartbeats the API refused: training on
    // 7 devices reported a fractional share of its arena (worker-node/test/occupancy.test.ts).
    nodeTimeoutMs: 30_000,
    env: { TIMESHARE_TEST_LONG_COMPLETIONS: process.env.REPLAN_LONG ?? '2:24:growing' },
    schedulerEnv: { TIMESHARE_MIN_RUN_SECONDS: '0' },
  });
  await c.startWorker('replan-node', 8);
});
after(() => c.close());

const job = (name: string, steps: number, task: Record<string, unknown>) => ({
  name,
  resources: { devices: 8 },
  workflow: {
    mode: 'auto',
    model: { preset: 'tiny' },
    task,
    steps,
    promptsPerStep: 32,
    groupSize: 8,
    checkpointEvery: 2,
    evalEvery: 1000,
    warmup: { maxSteps: 0 },
  },
});

const submit = async (t: TestTenant, body: object) =>
  (await t.as(c.h.http.post('/v1/jobs')).send(body).expect(201)).body.id as string;

type Ev = { type: string; data: Record<string, unknown> };
type Shape = { mode: string; generateDevices: number; trainDevices: number; microBatches: number };
const shape = (s: Shape) => `${s.mode} g${s.generateDevices}/t${s.trainDevices} m${s.microBatches}`;

test(
  'a job whose completions grow longer is re-planned once and its measured gain recorded',
  { timeout: 240_000 },
  async () => {
    const t = await c.h.createTenant('replanner', { maxDevicesPerJob: 8, maxConcurrentDevices: 8 });
    const started = Date.now();
    // 50 steps: it is moved once 5 steps are profiled (at step 7 or so), with some 43 left. A move
    // is decided only for a plan at least 15% faster a step (scheduler/planner/replan.ts), and
    // pays once the gain over the remaining steps beats its cost (half a step and ~2 s): with 43
    // left, any decision pays while a step takes over 0.35 s (~0.9 s measured here, 0.2 s gained a
    // step), and the job still runs 35 steps and more after the move, its gain measured after 5.
    // (It ran 80: 30 steps more at the end, ~0.5 s each.)
    const id = await submit(t, job('growing', 50, { name: 'addition', digits: 1 }));
    const done = await waitForStatus(c, t, id, ['succeeded', 'failed'], 220_000);
    assert.equal(done.status, 'succeeded', done.error ?? '');
    const events: Ev[] = await eventsOf(c, t, id);
    const types = events.map((e) => e.type);
    console.log(events.map((e) => `${e.type} ${JSON.stringify(e.data)}`).join('\n'));
    // Queued at submission and after the move only (no node lost, no crash).
    assert.equal(types.filter((x) => x === 'job.queued').length, 2, types.join(' '));

    const moves = events.filter((e) => e.type === 'job.replanned');
    assert.equal(moves.length, 1, `one move: ${types.join(' ')}`);
    const move = moves[0]!.data as {
      from: Shape;
      to: Shape;
      predictedGainSeconds: number;
      moveCostSeconds: number;
    };
    assert.ok(move.predictedGainSeconds > move.moveCostSeconds);
    assert.notEqual(shape(move.from), shape(move.to));
    const preempting = events.filter((e) => e.type === 'job.preempting');
    assert.deepEqual(
      preempting.map((e) => e.data.reason),
      ['replan'],
    );
    assert.deepEqual(
      events.filter((e) => e.type === 'job.preempted').map((e) => e.data.reason),
      ['replan'],
    );

    // Placed again with the plan the move chose, and resumed from the checkpoint it saved.
    const placed = events.filter((e) => e.type === 'job.placed');
    assert.equal(placed.length, 2);
    const second = placed[1]!.data.placement as {
      mode: string;
      stages: { generate: number[]; train: number[] };
      microBatches?: number;
    };
    assert.equal(second.mode, move.to.mode);
    // The requeued job is planned again from its profile when it is placed, and its completions are
    // still growing: the split may have moved by a device since the decision (g1/t7 decided, g2/t6
    // placed in one CI run). Both sides get devices, and together all 8.
    assert.ok(second.stages.generate.length >= 1 && second.stages.train.length >= 1);
    assert.equal(second.stages.generate.length + second.stages.train.length, 8);
    const runs = events.filter((e) => e.type === 'job.running');
    assert.equal(runs.length, 2);
    const resumed = runs[1]!.data.resumedFromStep as number;
    assert.ok(resumed > 2 && (await checkpointSteps(c, t, id)).includes(resumed), `resumed from ${resumed}`);
    assert.deepEqual(
      [placed[1]!.data.placement, placed[0]!.data.placement].map((p) => {
        const x = p as { nodeId: string; devices: number[] };
        return `${x.nodeId} ${x.devices.join(',')}`;
      }),
      Array(2).fill(`${(placed[0]!.data.placement as { nodeId: string }).nodeId} 0,1,2,3,4,5,6,7`),
      'moved in place: the same node and devices',
    );

    const measured = events.filter((e) => e.type === 'job.replan_measured');
    assert.equal(measured.length, 1, types.join(' '));
    const m = measured[0]!.data as {
      measuredStepSeconds: number;
      measuredGainSeconds: number;
      beforeStepSeconds: number;
      predictedGainSeconds: number;
      remainingSteps: number;
    };
    assert.ok(m.measuredStepSeconds > 0 && Number.isFinite(m.measuredGainSeconds));
    assert.ok(
      Math.abs(m.measuredGainSeconds - (m.beforeStepSeconds - m.measuredStepSeconds) * m.remainingSteps) <
        1e-6,
    );
    console.log(
      `moved ${shape(move.from)} → ${shape(move.to)} at step ${resumed}: predicted gain ${move.predictedGainSeconds.toFixed(2)} s > cost ${move.moveCostSeconds.toFixed(2)} s; ` +
        `step ${m.beforeStepSeconds.toFixed(3)} s before, ${m.measuredStepSeconds.toFixed(3)} s measured after; measured gain ${m.measuredGainSeconds.toFixed(2)} s over ${m.remainingSteps} steps (predicted ${m.predictedGainSeconds.toFixed(2)} s); ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  },
);

test(
  'a job too close to its end for a move to pay is declined and never preempted',
  { timeout: 180_000 },
  async () => {
    const t = await c.h.createTenant('declined', { maxDevicesPerJob: 8, maxConcurrentDevices: 8 });
    // The first test's job, 12 steps long: its completions lengthen after step 2 as that job's do
    // (the worker's setting names the job), so its profiles favour the split that the first test's
    // job moved to, but with a few steps left the move cannot pay. (A reversal job whose plans its
    // profiles priced close together got no decision in one CI run of five: its prediction did not
    // favour another plan.)
    const id = await submit(t, job('growing', 12, { name: 'addition', digits: 1 }));
    const done = await waitForStatus(c, t, id, ['succeeded', 'failed']);
    assert.equal(done.status, 'succeeded', done.error ?? '');
    const events: Ev[] = await eventsOf(c, t, id);
    const types = events.map((e) => e.type);
    const declined = events.filter((e) => e.type === 'job.replan_declined');
    assert.ok(declined.length >= 1, types.join(' '));
    for (const d of declined) {
      const x = d.data as {
        predictedGainSeconds: number;
        moveCostSeconds: number;
        from: Shape;
        to: Shape;
        remainingSteps: number;
      };
      assert.ok(x.predictedGainSeconds <= x.moveCostSeconds, JSON.stringify(x));
      assert.notEqual(shape(x.from), shape(x.to));
      console.log(
        `declined ${shape(x.from)} → ${shape(x.to)} with ${x.remainingSteps} steps left: gain ${x.predictedGainSeconds.toFixed(2)} s ≤ cost ${x.moveCostSeconds.toFixed(2)} s`,
      );
    }
    for (const never of ['job.replanned', 'job.preempting', 'job.preempted'])
      assert.ok(!types.includes(never), types.join(' '));
    assert.equal(events.filter((e) => e.type === 'job.running').length, 1);
  },
);
