// The event engine's invariants on tiny workloads (simulated time only; nothing here is timed).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultPolicy, kueueLikePolicy } from '../../core/policy.js';
import { simulate } from '../engine.js';
import { Rng } from '../rng.js';
import { drawTurnUnits } from '../step.js';
import { DEFAULT_PARTIAL_TAIL, planJob } from '../../planner/plan-job.js';
import {
  defaultPhysics,
  GB,
  GiB,
  SIM_DEVICE_THREADS,
  stepFigures,
  type SimJobSpec,
  type SimWorkload,
} from '../model.js';
import { specWorkload } from '../snapshot.js';
import { summarise } from '../summary.js';
import { syntheticWorkload } from '../workloads/synthetic.js';

const job = (id: string, over: Partial<SimJobSpec> = {}): SimJobSpec => ({
  id,
  tenant: 't',
  arrival: 0,
  devices: 1,
  priority: 1,
  steps: 20,
  parameters: 0.5e9,
  deviceBytes: 20 * GiB,
  stateBytesPerDevice: 4 * GB,
  generateBytesPerDevice: 1 * GB,
  shape: {
    turns: 1,
    generateSeconds: 30,
    tailSigma: 0,
    envSeconds: 0,
    rewardSeconds: 50,
    trainSeconds: 18,
    syncSeconds: 2,
  },
  checkpointEvery: 1e9,
  recurring: true,
  ...over,
});

const world = (jobs: SimJobSpec[], devices = 1): SimWorkload => ({
  name: 'tiny',
  cluster: { nodes: 1, devicesPerNode: devices, deviceMemoryBytes: 80 * GiB, hostMemoryBytes: 1024 * GiB },
  tenants: [{ id: 't', weight: 1, maxConcurrentDevices: 100, deviceHoursPerMonth: 1e6 }],
  jobs,
});

/** Generation 80% of the step with a long tail: on 4 devices with a step of lag, spatial wins. */
const aheadShape = {
  turns: 1,
  generateSeconds: 80,
  tailSigma: 1,
  envSeconds: 0,
  rewardSeconds: 5,
  trainSeconds: 13,
  syncSeconds: 2,
};

describe('simulator engine', () => {
  it("a lone job's completion time is its steps × step time (plus its first onload and the decision)", () => {
    const spec = job('solo');
    const r = simulate(world([spec]), defaultPolicy);
    const j = r.jobs[0]!;
    const expected =
      defaultPhysics.decisionSecondsPerJob +
      spec.generateBytesPerDevice / defaultPhysics.switchBytesPerSecond +
      spec.steps * stepFigures(spec.shape).step;
    assert.equal(j.status, 'done');
    assert.ok(Math.abs(j.finishedAt! - expected) < 1e-6, `${j.finishedAt} vs ${expected}`);
    // Alone, the job never changes holder after its first onload.
    assert.ok(r.recorder.deviceSeconds.switch < 0.2);
  });

  it('two jobs idle 50% of each step share one device and finish in about the time of one plus switches', () => {
    const alone = simulate(world([job('a')]), defaultPolicy).end;
    const r = simulate(world([job('a'), job('b')]), defaultPolicy);
    assert.equal(r.recorder.sharedPlacements, 1, 'the second job joins the first on the device');
    assert.ok(r.jobs.every((j) => j.status === 'done'));
    const switches = r.recorder.deviceSeconds.switch;
    assert.ok(switches > 0, 'every change of holder costs a switch');
    assert.ok(
      r.end <= (alone + switches) * 1.1,
      `both done at ${r.end.toFixed(0)} s, one alone ${alone.toFixed(0)} s`,
    );
    // Without time-sharing they run one after the other.
    const exclusive = simulate(world([job('a'), job('b')]), kueueLikePolicy);
    assert.ok(exclusive.end > 1.9 * alone);
  });

  it('places no job twice, finishes every job, and never exceeds a quota or a device bound', () => {
    const w = syntheticWorkload({ seed: 7, nodes: 1, arrivalHours: 1, overload: 1.5 });
    w.tenants[0]!.maxConcurrentDevices = 2;
    let quotaReached = false;
    for (const policy of [defaultPolicy, kueueLikePolicy]) {
      const placed = new Set<string>();
      const r = simulate(w, policy, {
        observe: (snapshot, d) => {
          const queued = new Set(snapshot.queued.map((q) => q.id));
          for (const p of d.place) {
            assert.ok(queued.has(p.jobId), `${p.jobId} placed while not queued`);
            placed.add(p.jobId);
          }
          const t = snapshot.tenants.find((x) => x.id === w.tenants[0]!.id)!;
          if (t.activeDevices === 2) quotaReached = true;
        },
      });
      assert.deepEqual(r.recorder.violations, []);
      assert.ok(
        r.jobs.every((j) => j.status === 'done'),
        'every job finishes',
      );
      assert.equal(placed.size, w.jobs.length);
    }
    assert.ok(quotaReached, 'the quota was binding at some point');
  });

  it('survives node failures: jobs on a failed node go back to the queue from their checkpoint and every job finishes', () => {
    const w = syntheticWorkload({ seed: 3, nodes: 2, arrivalHours: 2, overload: 1.5 });
    const failures = { mtbfHours: 1, repairHours: 0.5, detectSeconds: 30 };
    for (const [policy, planner] of [
      [defaultPolicy, true],
      [kueueLikePolicy, false],
    ] as const) {
      // A node found lost leaves the snapshot until it is repaired, and nothing is placed on it then.
      const down = new Set<string>();
      const r = simulate(w, policy, {
        planner,
        failures,
        observe: (snapshot, d) => {
          const ids = new Set(snapshot.nodes.map((n) => n.id));
          for (const p of d.place) assert.ok(ids.has(p.nodeId), `${p.jobId} placed on a lost node`);
          for (const n of ['node-0', 'node-1']) if (!ids.has(n)) down.add(n);
        },
      });
      assert.deepEqual(r.recorder.violations, []);
      assert.ok(r.recorder.nodeFailures >= 2, `${r.recorder.nodeFailures} failures`);
      assert.ok(r.recorder.nodeLostJobs > 0 && down.size > 0, 'jobs were lost with their node');
      assert.ok(
        r.jobs.every((j) => j.status === 'done' && j.stepsDone === j.spec.steps),
        'every job finishes all its steps',
      );
      // A job sent back loses at most the steps since its last periodic checkpoint.
      for (const j of r.jobs) assert.ok(j.stepsLost <= j.spec.checkpointEvery * (j.attempts - 1));
      assert.ok(r.jobs.some((j) => j.stepsLost > 0));
    }
  });

  it('keeps every invariant with the rules that are off by default turned on', () => {
    // Compaction into time-share groups and owners' devices kept from borrowers (docs/simulator.md):
    // both change who sits where, so the invariants are checked with them too, on a workload where
    // compaction moves jobs into groups.
    const w = syntheticWorkload({ seed: 2, nodes: 3, arrivalHours: 2, overload: 1.5 });
    let intoGroups = 0;
    const r = simulate(
      w,
      { ...defaultPolicy, compactIntoGroups: true, protectOwnerDevices: true },
      {
        planner: true,
        observe: (snapshot, d) => {
          for (const p of d.preempt) {
            const to = p.reason === 'compact' ? p.moveTo : undefined;
            if (!to) continue;
            const shared = snapshot.running.some(
              (x) =>
                x.id !== p.jobId && x.nodeId === to.nodeId && x.devices.some((i) => to.devices.includes(i)),
            );
            if (shared) intoGroups++;
          }
        },
      },
    );
    assert.ok(intoGroups > 0, 'a job was moved into a time-share group');
    assert.deepEqual(r.recorder.violations, []);
    assert.equal(summarise('optional rules', r).earlyRepreemptions, 0);
    assert.ok(r.jobs.every((j) => j.status === 'done' && j.stepsDone === j.spec.steps));
  });

  it('runs the plans the stage planner chooses: a measured job that may run ahead goes spatial and steps faster', () => {
    // Partial rollouts off: the split is what hides generation's tail (below, with them on).
    const spec = job('ahead', { devices: 4, shape: aheadShape, maxWeightLag: 1, steps: 30, partialTail: 0 });
    const temporal = simulate(world([spec], 4), defaultPolicy);
    const modes: string[] = [];
    const planned = simulate(world([spec], 4), defaultPolicy, {
      planner: true,
      observe: (_s, d) => modes.push(...d.place.map((p) => p.mode)),
    });
    assert.deepEqual(modes, ['spatial']);
    assert.deepEqual(planned.recorder.violations, []);
    assert.equal(planned.jobs[0]!.status, 'done');
    assert.equal(planned.jobs[0]!.stepsDone, 30);
    assert.ok(
      planned.end < 0.9 * temporal.end,
      `spatial ${planned.end.toFixed(0)} s against temporal ${temporal.end.toFixed(0)} s`,
    );
    // On-policy, the same job cannot overlap its steps; whatever the planner picks, it is not slower.
    const onPolicy = { ...spec, maxWeightLag: 0 };
    const strict = simulate(world([onPolicy], 4), defaultPolicy, { planner: true });
    assert.ok(strict.end <= simulate(world([onPolicy], 4), defaultPolicy).end * 1.05);
  });

  it('runs partial rollouts where the planner chooses them: a temporal job that leaves its tail to the next step', () => {
    const spec = job('carry', { devices: 1, shape: aheadShape, maxWeightLag: 1, steps: 30 });
    const holding = simulate(world([spec], 1), defaultPolicy);
    const placed: number[] = [];
    const planned = simulate(world([spec], 1), defaultPolicy, {
      planner: true,
      observe: (_s, d) => placed.push(...d.place.map((p) => p.plan.partialTail)),
    });
    assert.deepEqual(placed, [DEFAULT_PARTIAL_TAIL]);
    assert.deepEqual(planned.recorder.violations, []);
    assert.equal(planned.jobs[0]!.stepsDone, 30);
    assert.ok(
      planned.end < 0.95 * holding.end,
      `partial ${planned.end.toFixed(0)} s against holding the tail ${holding.end.toFixed(0)} s`,
    );
    // On-policy: nothing is carried.
    const strict: number[] = [];
    simulate(world([{ ...spec, maxWeightLag: 0 }], 1), defaultPolicy, {
      planner: true,
      observe: (_s, d) => strict.push(...d.place.map((p) => p.plan.partialTail)),
    });
    assert.deepEqual(strict, [0]);
  });

  it('reports generation calls stopped early as such, so the planner prices partial rollouts as they run', () => {
    const spec = job('carry', { devices: 1, shape: aheadShape, maxWeightLag: 1, steps: 30 });
    const run = simulate(world([spec], 1), defaultPolicy, { planner: true }).jobs[0]!;
    const profile = run.profile()!;
    const generate = profile.stages!.filter((s) => s.stage === 'generate');
    assert.deepEqual(
      generate.map((s) => s.partial ?? false),
      [true],
    );
    // Planned again from what it measured: the step predicted for partial rollouts is the one run.
    const plan = planJob({
      workload: specWorkload(spec, true),
      devices: 1,
      maxDevices: 1,
      memoryPerDeviceBytes: spec.deviceBytes,
      profile,
      threadsPerDevice: SIM_DEVICE_THREADS,
    });
    assert.equal(plan.partialTail, DEFAULT_PARTIAL_TAIL);
    const ratio = profile.stepSeconds / plan.stepSeconds;
    assert.ok(Math.abs(ratio - 1) < 0.02, `measured ÷ predicted step ${ratio.toFixed(3)}`);
  });

  it('partial rollouts stop a turn when all but the carried groups have ended: between bulk and tail', () => {
    const draw = (carried: number) => {
      const rng = new Rng(3);
      return Array.from({ length: 300 }, () => drawTurnUnits(0.8, rng, carried));
    };
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const one = draw(1);
    for (const t of one) assert.ok(t.bulk <= t.partial + 1e-9 && t.partial <= t.sync + 1e-9);
    // Nothing carried: the turn waits for its last sequence.
    assert.ok(draw(0).every((t) => Math.abs(t.partial - t.sync) < 1e-9));
    // A group waits for its longest sample, so carrying 1 of 8 groups recovers part of the tail.
    const [sync, bulk, partial] = [
      mean(one.map((t) => t.sync)),
      mean(one.map((t) => t.bulk)),
      mean(one.map((t) => t.partial)),
    ];
    const recovered = (sync - partial) / (sync - bulk);
    assert.ok(recovered > 0.4 && recovered < 0.95, `recovered ${recovered.toFixed(2)} of the tail`);
    // More groups carried, more of it.
    assert.ok(mean(draw(3).map((t) => t.partial)) < partial);
  });

  it('re-plans a job measured after it started in place, while another waits for its devices', () => {
    // The job above, new (no earlier profile): it starts temporal on the prior, is measured, and
    // moves to a spatial plan on the same 4 devices although a 4-device job waits for them.
    const spec = job('measured', {
      devices: 4,
      shape: aheadShape,
      maxWeightLag: 1,
      steps: 60,
      recurring: false,
      partialTail: 0,
    });
    const waiter = job('waiter', { devices: 4, arrival: 60, steps: 5 });
    const placements: [string, string, string][] = [];
    const r = simulate(world([spec, waiter], 4), kueueLikePolicy, {
      planner: true,
      observe: (_s, d) =>
        placements.push(...d.place.map((p): [string, string, string] => [p.jobId, p.mode, p.devices.join()])),
    });
    assert.deepEqual(r.recorder.violations, []);
    assert.equal(r.recorder.replans.move, 1);
    assert.equal(r.recorder.replans.measured, 1);
    assert.deepEqual(placements, [
      ['measured', 'temporal', '0,1,2,3'],
      ['measured', 'spatial', '0,1,2,3'],
      ['waiter', 'temporal', '0,1,2,3'],
    ]);
    assert.ok(r.jobs.every((j) => j.status === 'done' && j.stepsLost === 0));
  });

  it('preempts and requeues a spatial job cleanly: both loops stop, the steps so far are kept', () => {
    const shape = {
      turns: 2,
      generateSeconds: 40,
      tailSigma: 0.8,
      envSeconds: 10,
      rewardSeconds: 5,
      trainSeconds: 13,
      syncSeconds: 2,
    };
    const low = job('low', { devices: 4, shape, maxWeightLag: 1, steps: 60, priority: 1 });
    const high = job('high', { devices: 4, shape, arrival: 600, steps: 5, priority: 5 });
    const r = simulate(world([low, high], 4), kueueLikePolicy, { planner: true });
    assert.deepEqual(r.recorder.violations, []);
    assert.ok(r.recorder.preemptions >= 1, 'the higher-priority job preempts the spatial one');
    assert.ok(r.jobs.every((j) => j.status === 'done' && j.stepsDone === j.spec.steps));
    assert.equal(r.jobs[0]!.stepsLost, 0, 'the checkpoint at notice kept every step');
  });
  it('compacts: a wide job gets a node cleared when the free devices are spread, and the moved jobs finish', () => {
    // Two 4-device nodes. a–d fill the first (best fit), e and f half the second; c and d end early,
    // so when the 4-device job arrives two devices are free on each node.
    const long = { steps: 200 };
    const jobs = [
      job('a', long),
      job('b', long),
      job('c', { steps: 5 }),
      job('d', { steps: 5 }),
      job('e', long),
      job('f', long),
      job('wide', { devices: 4, arrival: 1000, steps: 5 }),
    ];
    const w: SimWorkload = { ...world(jobs, 4), cluster: { ...world(jobs, 4).cluster, nodes: 2 } };
    const on = simulate(w, defaultPolicy);
    const off = simulate(w, { ...defaultPolicy, compaction: false });
    const wideOf = (r: typeof on) => r.jobs.find((j) => j.spec.id === 'wide')!;
    assert.deepEqual(on.recorder.violations, []);
    assert.equal(on.recorder.preemptionsByReason.compact, 2, 'the two jobs of one node move');
    assert.ok(wideOf(on).queuedSeconds < 120, `queued ${wideOf(on).queuedSeconds.toFixed(0)} s`);
    assert.ok(wideOf(off).queuedSeconds > 10_000, 'without it, it waits for a long job to end');
    assert.ok(on.jobs.every((j) => j.status === 'done' && j.stepsDone === j.spec.steps && j.stepsLost === 0));
    assert.equal(summarise('on', on).preemptionReasons, 'compact 2');
  });

  it('records work as steps end and whether jobs wait as rounds decide, for comparisons under saturation', () => {
    // One device, 100 s steps: b waits from its arrival until a's 20 steps end.
    const r = simulate(world([job('a'), job('b', { arrival: 500 })]), kueueLikePolicy);
    const rec = r.recorder;
    const perStep = stepFigures(job('a').shape).step;
    assert.equal(rec.progress[rec.progress.length - 1], 40 * perStep, 'both jobs done: 40 steps of work');
    assert.deepEqual(rec.waiting, [false, true, false]);
    assert.equal(rec.waitingAt[1], 500);
    const a = r.jobs.find((j) => j.spec.id === 'a')!;
    const b = r.jobs.find((j) => j.spec.id === 'b')!;
    assert.equal(rec.waitingAt[2], b.firstPlacedAt, 'waiting ends in the round that places b');
    assert.ok(a.finishedAt! <= rec.waitingAt[2]!);
    // Work grows by one step at a time and never goes back here (no take-backs).
    for (let i = 1; i < rec.progress.length; i++) assert.ok(rec.progress[i]! > rec.progress[i - 1]!);
  });

  it('counts jobs/h over the arrival window as the work done up to the last arrival, and only while jobs wait then', () => {
    // One device, 100 s steps: at 1,000 s the first job has done 9 of its 20 steps (the decision
    // and the first onload come first) while two more wait.
    const later = (id: string, arrival: number) => job(id, { arrival });
    const busy = summarise(
      'busy',
      simulate(world([job('a'), later('b', 1000), later('c', 1000)]), kueueLikePolicy),
    );
    const near = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-9, `${a} vs ${b}`);
    near(busy.windowJobsPerHour, ((9 / 20) * 3) / 3 / (1000 / 3600));
    // Work is weighted: had the waiting jobs been twice as wide, the same 9 steps weigh less.
    const wide = (id: string) => job(id, { arrival: 1000, devices: 2 });
    const r = simulate(world([job('a'), wide('b'), wide('c')], 2), kueueLikePolicy);
    near(summarise('wide', r).windowJobsPerHour, ((9 / 20) * 1) / (5 / 3) / (1000 / 3600));
    // Nobody waits at the last arrival: not saturated, no figure.
    const idle = summarise('idle', simulate(world([job('a'), later('b', 3000)]), kueueLikePolicy));
    assert.ok(Number.isNaN(idle.windowJobsPerHour));
  });

  it("measures a waiting job's estimated start against its actual start", () => {
    // One device, measured 100 s steps: b waits for a's 20 steps, and its estimate is a's predicted
    // end; a job placed in its first round has none to measure.
    const r = summarise('eta', simulate(world([job('a'), job('b', { arrival: 500 })]), kueueLikePolicy));
    assert.equal(r.estimates.waited, 1);
    assert.equal(r.estimates.none, 0);
    // Within 2% of its 1,500 s wait (a's measured mean step against the steps it then ran).
    assert.ok(Math.abs(r.estimates.bias) < 30, `${r.estimates.bias} s`);
    assert.equal(r.estimates.p50, Math.abs(r.estimates.bias));
    // It started on the device a left: nobody was preempted for it, and it shared with nobody.
    assert.deepEqual(
      r.estimates.byStart.map((b) => [b.how, b.jobs]),
      [['free', 1]],
    );
    // A higher-priority job waits through the round that sends the running one its notice.
    const pre = summarise(
      'priority',
      simulate(
        world([job('low', { steps: 200 }), job('high', { arrival: 2000, priority: 5 })]),
        kueueLikePolicy,
      ),
    );
    assert.deepEqual(
      pre.estimates.byStart.map((b) => [b.how, b.jobs]),
      [['priority', 1]],
    );
  });
});
