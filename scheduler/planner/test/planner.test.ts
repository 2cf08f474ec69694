import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CostModel, fitStage, priorCoefficients, type StageSample } from '../cost-model.js';
import { searchPlan, type CutKind, type SearchCosts } from '../search.js';
import { DEFAULT_PARTIAL_TAIL, planJob, searchEnginePlan, costModelOf } from '../plan-job.js';
import type { Workload } from '../../core/types.js';

const facts = { parameters: 400_000, sequenceTokens: 10, threadsPerDevice: 1 };
const truth = { fixed: 0.004, parallel: 3e-4, serial: 2e-5 };
const timeOf = (b: number, n: number) => truth.fixed + (truth.parallel * b) / n + truth.serial * b;
const sample = (batch: number, devices: number, count = 5): StageSample => ({
  stage: 'train',
  batch,
  devices,
  computeSeconds: timeOf(batch, devices),
  switchSeconds: 0.002,
  count,
});

describe('cost model', () => {
  it('recovers how a stage scales once it has been measured at several shapes', () => {
    const fit = fitStage(priorCoefficients('train', facts), [
      sample(64, 1),
      sample(512, 1),
      sample(512, 2),
      sample(128, 4),
    ]);
    for (const [b, n] of [
      [256, 2],
      [1024, 4],
      [512, 8],
    ] as const) {
      const predicted = fit.fixed + (fit.parallel * b) / n + fit.serial * b;
      assert.ok(Math.abs(predicted / timeOf(b, n) - 1) < 0.05, `t(${b}, ${n}) off by more than 5%`);
    }
  });

  it('matches a single measured shape and keeps the prior where nothing was measured', () => {
    const model = new CostModel(facts, ['generate', 'train'], [sample(512, 2, 3)]);
    assert.ok(Math.abs(model.computeSeconds('train', 512, 2) / timeOf(512, 2) - 1) < 0.02);
    assert.equal(model.stage('train').confidence, 0.6);
    assert.equal(model.stage('generate').confidence, 0);
    assert.equal(model.confidence, 0, 'a plan is as sure as its least-measured stage');
    assert.equal(model.switchSeconds('train'), 0.002);
    const prior = new CostModel(facts, ['generate'], []);
    assert.equal(model.computeSeconds('generate', 64, 1), prior.computeSeconds('generate', 64, 1));
  });
});

/** Every plan, no memo, every split: what the search must agree with on small device counts. */
function exhaustive(
  stages: number,
  n: number,
  batch: number,
  m: number,
  cuts: CutKind[],
  costs: SearchCosts,
  overlap: boolean,
): number {
  type Result = { latency: number; interval: number; stream: number };
  const all = (i: number, j: number, d: number): Result[] => {
    const out: Result[] = [];
    for (let used = 1; used <= d; used++) {
      if (i === j) {
        const c = costs.call(i, batch / m, used);
        out.push({ latency: c, interval: c, stream: costs.streamed?.(i, batch / m, used) ?? c });
        continue;
      }
      for (let k = i; k < j; k++) {
        if (cuts.includes('temporal'))
          for (const l of all(i, k, used))
            for (const r of all(k + 1, j, used)) {
              const sw = costs.temporalCut?.(k, used) ?? 0;
              const interval = l.interval + r.interval + sw;
              out.push({ latency: l.latency + r.latency + sw, interval, stream: interval });
            }
        if (cuts.includes('spatial'))
          for (let n1 = 1; n1 < used; n1++)
            for (const l of all(i, k, n1))
              for (const r of all(k + 1, j, used - n1)) {
                const extra = costs.spatialCut?.(k, used) ?? 0;
                const interval = Math.max(l.stream, r.stream);
                out.push({ latency: l.latency + r.latency + extra, interval, stream: interval });
              }
      }
    }
    return out;
  };
  const step = (x: Result) =>
    overlap ? Math.max(x.latency / 2, m * x.interval) : x.latency + (m - 1) * x.interval;
  return Math.min(...all(0, stages - 1, n).map(step));
}

describe('plan search', () => {
  const perStage = [
    { fixed: 0.01, parallel: 0.8, serial: 0.05 },
    { fixed: 0.002, parallel: 0.05, serial: 0.01 },
    { fixed: 0.02, parallel: 1.5, serial: 0.02 },
  ];
  const costs: SearchCosts = {
    call: (s, b, n) =>
      perStage[s]!.fixed + (perStage[s]!.parallel * b) / (64 * n) + (perStage[s]!.serial * b) / 64,
    temporalCut: () => 0.03,
    spatialCut: () => 0.01,
  };

  // Generation streams on devices of its own: its tail (a third of a call) is hidden in steady state.
  const streaming: SearchCosts = {
    ...costs,
    streamed: (s, b, n) => costs.call(s, b, n) * (s === 0 ? 0.67 : 1),
  };

  it('finds the same best step time as trying every plan (3 stages, up to 6 devices)', () => {
    for (const c of [costs, streaming])
      for (const n of [1, 2, 3, 4, 6])
        for (const m of [1, 2, 4])
          for (const overlap of [false, true])
            for (const cuts of [['temporal'], ['spatial'], ['temporal', 'spatial']] as CutKind[][]) {
              const found = searchPlan({
                stages: ['generate', 'reward', 'train'],
                devices: n,
                batch: 64,
                granularities: [m],
                cuts,
                overlapSteps: overlap,
                costs: c,
              });
              const best = exhaustive(3, n, 64, m, cuts, c, overlap);
              if (best === Infinity) assert.equal(found, null);
              else assert.ok(Math.abs(found!.stepSeconds - best) < 1e-9, `n=${n} m=${m} ${cuts.join('+')}`);
            }
  });

  it('returns a device map that matches its mode', () => {
    const r = searchPlan({
      stages: ['generate', 'reward', 'train'],
      devices: 16,
      batch: 64,
      granularities: [1, 4],
      cuts: ['temporal', 'spatial'],
      overlapSteps: true,
      costs,
    })!;
    const sets = Object.values(r.stageDevices);
    assert.equal(sets.length, 3);
    for (const s of sets) for (const d of s) assert.ok(d >= 0 && d < r.devices);
    if (r.mode === 'temporal') for (const s of sets) assert.deepEqual(s, sets[0]);
    if (r.mode === 'spatial')
      for (let a = 0; a < 3; a++)
        for (let b = a + 1; b < 3; b++) assert.ok(sets[a]!.every((d) => !sets[b]!.includes(d)));
    assert.ok(r.stepSeconds > 0 && Number.isFinite(r.stepSeconds));
  });
});

describe('planJob', () => {
  const w = (over: Partial<Workload> = {}): Workload => ({
    mode: 'auto',
    parameters: 400_000,
    steps: 100,
    promptsPerStep: 64,
    groupSize: 8,
    sequenceTokens: 10,
    microBatches: 1,
    maxWeightLag: 1,
    ...over,
  });
  const input = (over: Partial<Workload> = {}) => ({
    workload: w(over),
    devices: 4,
    maxDevices: 4,
    memoryPerDeviceBytes: null,
    profile: null,
  });

  it('honours an explicit mode and costs it; auto takes the fastest of them', () => {
    const temporal = planJob(input({ mode: 'temporal' }));
    const spatial = planJob(input({ mode: 'spatial', microBatches: 4 }));
    const hybrid = planJob(input({ mode: 'hybrid' }));
    const auto = planJob({
      ...input(),
      profile: {
        stepSeconds: temporal.stepSeconds,
        busySeconds: temporal.stepSeconds,
        switchSeconds: 0,
        peakBytes: 1e7,
        samples: 5,
        stages: [],
      },
    });
    assert.equal(temporal.mode, 'temporal');
    assert.equal(spatial.mode, 'spatial');
    assert.equal(spatial.microBatches, 4, 'an explicit mode keeps the spec’s micro-batches');
    assert.equal(hybrid.mode, 'hybrid');
    assert.ok(hybrid.generateDevices === 4 && hybrid.trainDevices < 4);
    const fastest = Math.min(
      temporal.predictedStepSeconds,
      spatial.predictedStepSeconds,
      hybrid.predictedStepSeconds,
    );
    assert.ok(auto.predictedStepSeconds <= fastest + 1e-12);
  });

  it('moves its prediction to what the job measured', () => {
    const model = costModelOf({ workload: w(), profile: null });
    const prior = searchEnginePlan(model, w({ mode: 'temporal' }), 2, 'temporal');
    const measured: StageSample[] = [
      { stage: 'generate', batch: 512, devices: 2, computeSeconds: 0.05, switchSeconds: 0, count: 6 },
      { stage: 'train', batch: 512, devices: 2, computeSeconds: 0.4, switchSeconds: 0.006, count: 6 },
    ];
    const plan = planJob({
      ...input({ mode: 'temporal' }),
      devices: 2,
      maxDevices: 2,
      profile: {
        stepSeconds: 0.47,
        busySeconds: 0.456,
        switchSeconds: 0.006,
        peakBytes: 1e7,
        samples: 6,
        stages: measured,
      },
    });
    assert.notEqual(Math.round(prior.stepSeconds * 1000), Math.round(plan.predictedStepSeconds * 1000));
    assert.ok(Math.abs(plan.predictedStepSeconds - 0.456) < 0.01, `${plan.predictedStepSeconds}`);
    assert.ok(Math.abs(plan.stepSeconds - 0.47) < 0.01);
    assert.equal(plan.confidence, 1);
  });

  // A generation call measured at 40% tail: 10 s on 4 devices, 6 s of it the slots' work.
  const tailed = (stepSeconds: number): StageSample[] => [
    {
      stage: 'generate',
      batch: 512,
      devices: 4,
      computeSeconds: 10,
      switchSeconds: 0,
      count: 5,
      occupancy: 0.6,
    },
    { stage: 'train', batch: 512, devices: 4, computeSeconds: stepSeconds - 10, switchSeconds: 0, count: 5 },
  ];
  const profiled = (stages: StageSample[]) => ({
    stepSeconds: stages.reduce((a, s) => a + s.computeSeconds, 0),
    busySeconds: stages.reduce((a, s) => a + s.computeSeconds, 0),
    switchSeconds: 0,
    peakBytes: 1e7,
    samples: 5,
    stages,
  });

  it('reads the tail from the occupancy: the slots’ work spreads over devices, the tail neither spreads nor streams', () => {
    const model = costModelOf({ workload: w(), profile: profiled(tailed(12)) });
    assert.ok(Math.abs(model.computeSeconds('generate', 512, 4) - 10) < 0.05);
    // Twice the devices halve the 6 s of work; the 4 s tail stays.
    const wider = model.computeSeconds('generate', 512, 8);
    assert.ok(wider > 6.5 && wider < 7.5, `${wider}`);
    const streamed = model.streamedSeconds('generate', 512, 4);
    assert.ok(Math.abs(streamed - 6) < 0.1, `${streamed}`);
    // Training reported no occupancy: it streams no faster than it runs.
    assert.equal(model.streamedSeconds('train', 512, 4), model.computeSeconds('train', 512, 4));
  });

  it('keeps the tail of calls stopped early for partial rollouts apart from that of whole calls', () => {
    // Whole calls: 10 s, 4 s of tail (occupancy 0.6). Stopped early: 7 s, 1 s of tail left (6/7).
    const stopped: StageSample = {
      stage: 'generate',
      batch: 512,
      devices: 4,
      computeSeconds: 7,
      switchSeconds: 0,
      count: 5,
      occupancy: 6 / 7,
      partial: true,
    };
    const both = costModelOf({ workload: w(), profile: profiled([...tailed(12), stopped]) });
    const near = (a: number, b: number) => Math.abs(a - b) < 0.1;
    assert.ok(
      near(both.computeSeconds('generate', 512, 4), 10),
      `${both.computeSeconds('generate', 512, 4)}`,
    );
    assert.ok(
      near(both.streamedSeconds('generate', 512, 4), 6),
      `${both.streamedSeconds('generate', 512, 4)}`,
    );
    // A temporal plan with partial rollouts still waits for the tail its calls left: 7 s, not 6.
    assert.ok(near(both.partialSeconds('generate', 512, 4), 7), `${both.partialSeconds('generate', 512, 4)}`);
    // Only calls stopped early measured: they are what such a plan costs (the slots' work and the
    // tail left), where taking that tail out again priced them at 6 s.
    const only = costModelOf({
      workload: w(),
      profile: profiled([stopped, tailed(12)[1]!]),
    });
    assert.ok(near(only.partialSeconds('generate', 512, 4), 7), `${only.partialSeconds('generate', 512, 4)}`);
    assert.ok(
      near(only.streamedSeconds('generate', 512, 4), 6),
      `${only.streamedSeconds('generate', 512, 4)}`,
    );
    // Whole calls only (no call stopped early yet): partial rollouts priced at the streamed time.
    const whole = costModelOf({ workload: w(), profile: profiled(tailed(12)) });
    assert.equal(whole.partialSeconds('generate', 512, 4), whole.streamedSeconds('generate', 512, 4));
  });

  it('splits a job only once its stages are measured, and then where a generator streaming ahead wins', () => {
    assert.equal(planJob(input()).mode, 'temporal', 'no profile: temporal, whatever the prior says');
    // Partial rollouts off: a temporal plan then holds generation's tail (below, with them on).
    const measured = { ...input({ partialTail: 0 }), profile: profiled(tailed(12)) };
    const ahead = planJob(measured);
    assert.equal(ahead.mode, 'spatial', 'generation streams on its devices while training runs on the rest');
    assert.ok(ahead.predictedStepSeconds < 12);
    const onPolicy = planJob({ ...measured, workload: w({ maxWeightLag: 0 }) });
    assert.ok(onPolicy.predictedStepSeconds > ahead.predictedStepSeconds, 'no lag, no overlap of steps');
  });

  it('leaves the tail to the next step with partial rollouts where the job allows weight lag', () => {
    const profile = profiled(tailed(12));
    // Nothing measured, no tail known: priced as holding the tail, and on (it carries only stragglers).
    const unmeasured = planJob(input());
    assert.equal(unmeasured.partialTail, DEFAULT_PARTIAL_TAIL);
    assert.equal(unmeasured.predictedStepSeconds, planJob(input({ partialTail: 0 })).predictedStepSeconds);
    const partial = planJob({ ...input(), profile });
    assert.equal(partial.mode, 'temporal');
    assert.equal(partial.partialTail, DEFAULT_PARTIAL_TAIL);
    // 4 s of the 10 s generation is the tail: the step loses it, and beats the split that streams.
    const split = planJob({ ...input({ partialTail: 0 }), profile });
    const holding = planJob({ ...input({ mode: 'temporal' }), profile });
    assert.equal(holding.partialTail, 0, 'an explicit mode without partialTail: off');
    assert.ok(Math.abs(holding.predictedStepSeconds - partial.predictedStepSeconds - 4) < 0.1);
    assert.ok(partial.predictedStepSeconds < split.predictedStepSeconds);
    assert.ok(partial.busyFraction < holding.busyFraction, 'its devices are free for longer');
    // On-policy jobs never carry a sequence into the next step.
    assert.equal(planJob({ ...input({ maxWeightLag: 0 }), profile }).partialTail, 0);
    // As the spec sets it: on for a temporal plan, priced without the tail.
    const asked = planJob({ ...input({ mode: 'temporal', partialTail: 0.25 }), profile });
    assert.equal(asked.partialTail, 0.25);
    assert.equal(asked.predictedStepSeconds, partial.predictedStepSeconds);
  });

  it('never puts a stage on fewer devices than its state fits', () => {
    const big = w({ parameters: 4e9 }); // 64 GB of training state, ×1.3 working margin
    const plan = planJob({
      ...input(),
      workload: big,
      deviceMemoryBytes: 40e9,
      profile: profiled(tailed(12)),
    });
    if (plan.mode !== 'temporal') assert.ok((big.parameters * 16 * 1.3) / plan.trainDevices <= 40e9);
    assert.ok(plan.trainDevices >= 3);
  });

  it('serves the same frozen plan for the same inputs, and a fresh one when any input differs', () => {
    const base = { ...input({ mode: 'hybrid', microBatches: 2 }), threadsPerDevice: 2 };
    const plan = planJob(base);
    assert.ok(Object.isFrozen(plan));
    assert.equal(planJob({ ...base, workload: { ...base.workload } }), plan, 'equal inputs, new objects');
    // Each input on its own: a cache keyed on fewer fields would hand back `plan` for one of these.
    const variants = [
      { ...base, workload: w({ mode: 'temporal', microBatches: 2 }) },
      { ...base, workload: w({ mode: 'hybrid', microBatches: 2, parameters: 800_000 }) },
      { ...base, workload: w({ mode: 'hybrid', microBatches: 2, promptsPerStep: 32 }) },
      { ...base, workload: w({ mode: 'hybrid', microBatches: 2, groupSize: 4 }) },
      { ...base, workload: w({ mode: 'hybrid', microBatches: 2, sequenceTokens: 20 }) },
      { ...base, workload: w({ mode: 'hybrid', microBatches: 4 }) },
      { ...base, workload: w({ mode: 'hybrid', microBatches: 2, maxWeightLag: 0 }) },
      { ...base, devices: 2 },
      { ...base, maxDevices: 8 },
      { ...base, memoryPerDeviceBytes: 2 ** 30 },
      { ...base, threadsPerDevice: 4 },
      { ...base, deviceMemoryBytes: 80e9 },
      { ...base, split: { generate: 3, train: 1 } },
      { ...base, profile: profiled(tailed(12)) },
    ];
    for (const v of variants) assert.notEqual(planJob(v), plan, JSON.stringify(v).slice(0, 120));
    // The plan for a changed input is that input's own, whichever was asked first.
    for (const v of variants) assert.deepEqual({ ...planJob(v) }, { ...planJob(structuredClone(v)) });
  });
});
