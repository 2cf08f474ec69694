/**
 * What a job wants and what it costs: the one function the round, the ETA and the simulator read
 * plans from. It builds the job's cost model (prior, then its own profiles), searches its stage
 * graph (search.ts) for the plan the model predicts fastest on the devices it may use, and reports
 * the devices wanted, the per-stage split, the micro-batch count and the predicted step time.
 *
 * The engine runs a workflow as two calls: `generate` (rewards are scored inside it) and `train`
 * (the reference log-probs, the update and the weight publication inside it). Those are the stages
 * searched: a temporal plan runs both in one hold per step; a spatial plan puts them on disjoint
 * devices, pipelined in micro-batches; an explicit `hybrid` runs generation on every device and
 * training on part of them, the shared devices taken in turns under the device lock.
 */
import { presetSizes } from '../../common/engine-vocabulary.js';
import type { JobPlan, ProfileSummary, Workload } from '../core/types.js';
import { CostModel, STATE_BYTES_PER_PARAMETER, type ModelFacts } from './cost-model.js';
import { searchPlan, type CutKind, type SearchResult } from './search.js';

export const ENGINE_STAGES = ['generate', 'train'] as const;

/** Share of a step spent off the devices (reports, rewards, bookkeeping) before profiles say. */
export const PRIOR_IDLE_FRACTION = 0.2;
/** Micro-batch counts tried for pipelined plans. */
const GRANULARITIES = [1, 2, 4, 8, 16];
/**
 * Share of a step's prompt groups an `auto` job's temporal plan may carry unfinished into the next
 * step (partial rollouts): the last quarter. A group ends with its longest sample, so with 8 groups
 * a step, carrying the last one recovered 70–77% of generation's straggler tail in the simulator's
 * model and carrying the last two 92–98% (σ 1.0–0.6); over 20 seeds a quarter gave 1.2–2.1% more
 * jobs/h while saturated than an eighth, and three eighths less than a quarter (docs/simulator.md,
 * finding 14). APRIL's example configuration goes further: it launches twice the groups a step
 * trains on and stops once half have finished (arXiv 2509.18521).
 */
export const DEFAULT_PARTIAL_TAIL = 0.25;

/** Parameters of a model from the spec's preset or sizes (a decoder: 12·L·d² plus embeddings). */
export function modelParameters(model: { preset?: string; layers?: number; dModel?: number }): number {
  const preset = presetSizes[(model.preset ?? 'tiny') as keyof typeof presetSizes] ?? presetSizes.tiny;
  const layers = model.layers ?? preset.layers;
  const d = model.dModel ?? preset.dModel;
  return 12 * layers * d * d + 2 * 16 * d;
}

export interface PlanInput {
  workload: Workload;
  devices: number;
  maxDevices: number;
  memoryPerDeviceBytes: number | null;
  profile: ProfileSummary | null;
  /** Engine threads per device in the job's pool (1 when unknown). */
  threadsPerDevice?: number;
  /**
   * Memory of one device in the pool: a stage may not run on so few devices that its sharded state
   * (training: the whole optimizer state, generation: the weights) and a 30% working margin exceed it.
   */
  deviceMemoryBytes?: number;
  /**
   * A running spatial or hybrid job's split as it runs (its placement's stage map, which the
   * worker's reactive balancer may have changed): the plan is costed at that split instead of the
   * best one, so the round and re-planning see the job as it is.
   */
  split?: { generate: number; train: number };
}

/** The job's cost model: the prior for its model and pool, fitted to whatever it has measured. */
export function costModelOf(input: Pick<PlanInput, 'workload' | 'profile' | 'threadsPerDevice'>): CostModel {
  const facts: ModelFacts = {
    parameters: input.workload.parameters,
    sequenceTokens: input.workload.sequenceTokens,
    threadsPerDevice: input.threadsPerDevice ?? 1,
  };
  return new CostModel(facts, ENGINE_STAGES, input.profile?.stages ?? []);
}

export interface EnginePlan extends SearchResult {
  /** Devices (offsets within the job's) that generate and that train. */
  generate: number[];
  train: number[];
}

/**
 * The fastest plan for `devices` devices that the requested mode allows; `hybrid` is costed as
 * generation on all of them with training on the best-sized part.
 */
export function searchEnginePlan(
  model: CostModel,
  w: Workload,
  devices: number,
  requested: Workload['mode'],
  deviceMemoryBytes = Infinity,
  split?: { generate: number; train: number },
  partialRollouts = false,
): EnginePlan {
  const fits = (stage: string, n: number) =>
    (w.parameters * (stage === 'generate' ? 2 : STATE_BYTES_PER_PARAMETER) * 1.3) / n <= deviceMemoryBytes;
  const sequences = w.promptsPerStep * w.groupSize;
  const prompts = w.promptsPerStep;
  // `auto` chooses the granularity too; an explicit mode keeps the spec's micro-batches.
  const own = w.microBatches ?? 1;
  const granularities =
    requested === 'auto' || prompts % own !== 0 ? GRANULARITIES.filter((m) => prompts % m === 0) : [own];
  const weightLag = w.maxWeightLag ?? 1;
  const overlapSteps = weightLag > 0;
  const costs = {
    call: (stage: number, batch: number, n: number) => {
      const name = ENGINE_STAGES[stage]!;
      if (!fits(name, n)) return Infinity;
      // Partial rollouts: generation stops before its stragglers' tail, which the next step finishes.
      const seconds =
        partialRollouts && name === 'generate'
          ? model.partialSeconds(name, batch, n)
          : model.computeSeconds(name, batch, n);
      return seconds + model.switchSeconds(name);
    },
    streamed: (stage: number, batch: number, n: number) => {
      const name = ENGINE_STAGES[stage]!;
      if (!fits(name, n)) return Infinity;
      return model.streamedSeconds(name, batch, n) + model.switchSeconds(name);
    },
    // One engine, one hold: the trainer's onload brings the weights generation needs.
    temporalCut: () => -model.switchSeconds('generate'),
    spatialCut: () => weightSyncSeconds(w.parameters),
  };
  const search = (cuts: CutKind[], grains: number[]) =>
    searchPlan({
      stages: ENGINE_STAGES,
      devices,
      batch: sequences,
      granularities: grains,
      cuts,
      overlapSteps,
      weightLag,
      costs,
    });
  // The temporal plan always exists; searched only where it is the answer or the fallback.
  const temporal = () => search(['temporal'], [1])!;
  const asEngine = (r: SearchResult): EnginePlan => ({
    ...r,
    generate: r.stageDevices.generate!,
    train: r.stageDevices.train!,
  });
  if (requested === 'temporal' || devices < 2 || partialRollouts) return asEngine(temporal());
  if (requested === 'hybrid')
    return (
      hybridPlan(model, w, devices, granularities, weightLag, fits, split?.train) ?? asEngine(temporal())
    );
  if (requested === 'spatial' && split && split.generate >= 1 && split.train >= 1) {
    // The spatial cut at one given split: every other device count of a stage costs Infinity, so
    // the search's only finite plan on generate + train devices is that split.
    const only = (stage: number, n: number) =>
      n === (ENGINE_STAGES[stage] === 'generate' ? split.generate : split.train);
    const fixed = searchPlan({
      stages: ENGINE_STAGES,
      devices: split.generate + split.train,
      batch: sequences,
      granularities,
      cuts: ['spatial'],
      overlapSteps,
      weightLag,
      costs: {
        ...costs,
        call: (s, b, n) => (only(s, n) ? costs.call(s, b, n) : Infinity),
        streamed: (s, b, n) => (only(s, n) ? costs.streamed(s, b, n) : Infinity),
      },
    });
    if (fixed) return asEngine(fixed);
  }
  const cuts: CutKind[] = requested === 'spatial' ? ['spatial'] : ['temporal', 'spatial'];
  const found = search(cuts, granularities);
  return asEngine(found ?? temporal());
}

/** Publishing the trainer's weights and the generator taking them, once a step. */
function weightSyncSeconds(parameters: number): number {
  return 2 * (5e-4 + (4 * parameters) / 3e9);
}

/**
 * Generation on all n devices, training on the last t of them: the shared devices serialise the
 * two stages, so one micro-batch costs both calls back to back.
 */
function hybridPlan(
  model: CostModel,
  w: Workload,
  n: number,
  granularities: number[],
  weightLag: number,
  fits: (stage: string, n: number) => boolean,
  onlyTrain?: number,
): EnginePlan | null {
  const overlapSteps = weightLag > 0;
  let best: EnginePlan | null = null;
  const fixed = onlyTrain !== undefined && onlyTrain >= 1 && onlyTrain < n ? onlyTrain : null;
  for (const m of granularities) {
    const b = (w.promptsPerStep / m) * w.groupSize;
    const gen = model.computeSeconds('generate', b, n) + model.switchSeconds('generate');
    for (let t = fixed ?? 1; t < (fixed === null ? n : fixed + 1); t++) {
      if (!fits('train', t)) continue;
      const train = model.computeSeconds('train', b, t) + model.switchSeconds('train');
      const latency = gen + train + weightSyncSeconds(w.parameters);
      const interval = gen + train;
      const step = overlapSteps
        ? Math.max(latency / (1 + weightLag), m * interval)
        : latency + (m - 1) * interval;
      if (best && step >= best.stepSeconds) continue;
      const all = Array.from({ length: n }, (_, i) => i);
      best = {
        stepSeconds: step,
        microBatches: m,
        devices: n,
        mode: 'hybrid',
        stageDevices: { generate: all, train: all.slice(n - t) },
        latencySeconds: latency,
        intervalSeconds: interval,
        tree: {
          kind: 'temporal',
          devices: n,
          leftDevices: n,
          left: { kind: 'stage', stage: 'generate', devices: n },
          right: { kind: 'stage', stage: 'train', devices: t },
        },
        generate: all,
        train: all.slice(n - t),
      };
    }
  }
  return best;
}

/**
 * Seconds per step that the job's busiest device computes under `plan`, switches excluded (the
 * round adds a plan's switch share to its load on its own). The busiest, not the mean: a time-share
 * partner joins every device of the job, so it meets the most loaded one. Pairing spatial jobs by
 * their mean (a streaming generator busy all the time beside trainers busy half of it) made them
 * 1.2–1.4× slower than temporal in the simulator, where they should be faster.
 */
function heldPerDevice(model: CostModel, w: Workload, plan: EnginePlan, partialRollouts: boolean): number {
  const b = (w.promptsPerStep / plan.microBatches) * w.groupSize;
  const n = plan.generate.length;
  const gen =
    plan.microBatches *
    (partialRollouts ? model.partialSeconds('generate', b, n) : model.computeSeconds('generate', b, n));
  const train = plan.microBatches * model.computeSeconds('train', b, plan.train.length);
  if (plan.mode === 'temporal') return gen + train;
  const training = new Set(plan.train);
  // A device that both generates and trains (hybrid) is the busiest; else the busier side's.
  if (plan.generate.some((d) => training.has(d))) return gen + train;
  return Math.max(plan.generate.length ? gen : 0, plan.train.length ? train : 0);
}

/**
 * Plans by their inputs. A round plans every queued job again (10,000 of them in bench:scheduler)
 * and most have the same few shapes and no profile, or a profile that does not change while they
 * wait; the search is tens of µs, the key one. Cleared when it grows past a bound.
 */
const planCache = new Map<string, Readonly<JobPlan>>();
const PLAN_CACHE_MAX = 50_000;

function cacheKey(input: PlanInput): string {
  const w = input.workload;
  const p = input.profile;
  const profileKey = p
    ? `${p.stepSeconds}|${p.busySeconds}|${p.switchSeconds}|${p.peakBytes}|${p.samples}|` +
      (p.stages ?? [])
        .map(
          (s) =>
            `${s.stage},${s.batch},${s.devices},${s.computeSeconds},${s.switchSeconds},${s.count},${s.occupancy},${s.partial === true}`,
        )
        .join(';')
    : '';
  return (
    `${w.mode}|${w.parameters}|${w.promptsPerStep}|${w.groupSize}|${w.sequenceTokens}|` +
    `${w.microBatches}|${w.maxWeightLag}|${w.partialTail}|${input.devices}|${input.maxDevices}|${input.memoryPerDeviceBytes}|` +
    `${input.threadsPerDevice}|${input.deviceMemoryBytes}|` +
    `${input.split ? `${input.split.generate}/${input.split.train}` : ''}|${profileKey}`
  );
}

export function planJob(input: PlanInput): JobPlan {
  // Without a profile every input is a number: looked up by a hash of them, no key string built
  // (a round of 10,000 queued jobs spent 5–14 ms building and hashing the strings).
  if (!input.profile) return planUnprofiled(input);
  const key = cacheKey(input);
  const cached = planCache.get(key);
  if (cached) return cached;
  // Frozen: one plan object serves every job of the same inputs, so no caller may change it.
  const plan = Object.freeze(computePlan(input));
  if (planCache.size >= PLAN_CACHE_MAX) planCache.clear();
  planCache.set(key, plan);
  return plan;
}

const MODE_CODES: Record<string, number> = { temporal: 1, spatial: 2, hybrid: 3, auto: 4 };

/** The numeric inputs of a plan without a profile, in a fixed order (-1: absent). */
function unprofiledFields(input: PlanInput, into: number[]): number[] {
  const w = input.workload;
  into[0] = MODE_CODES[w.mode] ?? 0;
  into[1] = w.parameters;
  into[2] = w.promptsPerStep;
  into[3] = w.groupSize;
  into[4] = w.sequenceTokens;
  into[5] = w.microBatches ?? -1;
  into[6] = w.maxWeightLag ?? -1;
  into[7] = input.devices;
  into[8] = input.maxDevices;
  into[9] = input.memoryPerDeviceBytes ?? -1;
  into[10] = input.threadsPerDevice ?? -1;
  into[11] = input.deviceMemoryBytes ?? -1;
  into[12] = input.split?.generate ?? -1;
  into[13] = input.split?.train ?? -1;
  into[14] = w.partialTail ?? -1;
  return into;
}

const unprofiledCache = new Map<number, { fields: number[]; plan: Readonly<JobPlan> }[]>();
let unprofiledEntries = 0;
/** Reused for every lookup: the fields are copied only when a plan is stored. */
const scratchFields: number[] = new Array<number>(15).fill(0);

function planUnprofiled(input: PlanInput): JobPlan {
  const f = unprofiledFields(input, scratchFields);
  // FNV-1a over each field's low and high 32 bits; a hit is checked field by field.
  let h = 0x811c9dc5;
  for (let i = 0; i < f.length; i++) {
    const x = f[i]!;
    h = Math.imul(h ^ (x | 0), 0x01000193);
    h = Math.imul(h ^ (Math.floor(x / 4294967296) | 0), 0x01000193);
  }
  const bucket = unprofiledCache.get(h);
  if (bucket)
    for (const e of bucket) {
      let same = true;
      for (let i = 0; i < f.length && same; i++) same = Object.is(e.fields[i], f[i]);
      if (same) return e.plan;
    }
  const plan = Object.freeze(computePlan(input));
  if (unprofiledEntries >= PLAN_CACHE_MAX) {
    unprofiledCache.clear();
    unprofiledEntries = 0;
  }
  const entry = { fields: [...f], plan };
  if (bucket) bucket.push(entry);
  else unprofiledCache.set(h, [entry]);
  unprofiledEntries++;
  return plan;
}

function computePlan(input: PlanInput): JobPlan {
  const w = input.workload;
  const model = costModelOf(input);
  // `auto` splits a job only once its stages are measured: the prior is a size-based guess, and a
  // wrong split (generation on too few devices) costs far more than a temporal step loses.
  const measured = (input.profile?.stages?.length ?? 0) > 0;
  const requested = w.mode === 'auto' && !measured ? 'temporal' : w.mode;
  const devices = Math.max(1, input.devices);
  let chosen = searchEnginePlan(model, w, devices, requested, input.deviceMemoryBytes, input.split);
  // Partial rollouts: as the spec sets them for a temporal plan; for `auto` with weight lag, the
  // temporal plan with them is a candidate of its own, taken unless predicted slower than the best.
  // Without a measured tail it is priced as the plain temporal plan and still taken: the engine
  // carries groups only when stragglers hold a step up, within the lag the job allows.
  let partialTail = chosen.mode === 'temporal' ? (w.partialTail ?? 0) : 0;
  if (partialTail > 0)
    chosen = searchEnginePlan(model, w, devices, 'temporal', input.deviceMemoryBytes, undefined, true);
  else if (w.partialTail === undefined && w.mode === 'auto' && (w.maxWeightLag ?? 1) >= 1) {
    const partial = searchEnginePlan(model, w, devices, 'temporal', input.deviceMemoryBytes, undefined, true);
    if (partial.stepSeconds <= chosen.stepSeconds * (1 + 1e-9)) {
      chosen = partial;
      partialTail = DEFAULT_PARTIAL_TAIL;
    }
  }
  const held = heldPerDevice(model, w, chosen, partialTail > 0);
  const stateBytes = w.parameters * STATE_BYTES_PER_PARAMETER;
  const sequences = w.promptsPerStep * w.groupSize;
  const activationBytes = sequences * w.sequenceTokens * Math.sqrt(w.parameters) * 4;
  const priorDeviceBytes = stateBytes + activationBytes / chosen.devices;

  // Off-device time per step (rewards, reports, evaluation): measured when the job has run, else a
  // prior share. With stage samples the fitted model prices the chosen plan; without (an older
  // profile) the measured step stands for it.
  const p = input.profile;
  const confidence = p ? Math.min(1, p.samples / 5) : 0;
  const priorStep = chosen.stepSeconds / (1 - PRIOR_IDLE_FRACTION);
  const gap = p ? Math.max(0, p.stepSeconds - p.busySeconds) : 0;
  const fitted = p?.stages?.length ? chosen.stepSeconds + gap : (p?.stepSeconds ?? priorStep);
  const stepSeconds = confidence * fitted + (1 - confidence) * priorStep;
  const priorSwitch = model.switchSeconds('train');
  const switchSeconds = p ? confidence * p.switchSeconds + (1 - confidence) * priorSwitch : priorSwitch;
  const measuredHeld = p?.stages?.length
    ? held
    : Math.max(0, (p?.busySeconds ?? 0) - (p?.switchSeconds ?? 0));
  const busySeconds = confidence * measuredHeld + (1 - confidence) * held;
  const measuredBytes = p && p.peakBytes > 0 ? p.peakBytes : priorDeviceBytes;
  return {
    devicesMin: chosen.devices,
    devicesMax: Math.max(chosen.devices, input.maxDevices),
    mode: chosen.mode,
    stepSeconds,
    busyFraction: Math.min(1, busySeconds / Math.max(stepSeconds, 1e-9)),
    switchSeconds,
    // An explicit request is honoured as the job's reservation on each device.
    deviceBytes: input.memoryPerDeviceBytes ?? measuredBytes,
    hostBytes: stateBytes,
    confidence,
    microBatches: chosen.microBatches,
    generateDevices: chosen.generate.length,
    trainDevices: chosen.train.length,
    predictedStepSeconds: chosen.stepSeconds,
    partialTail,
    priorStepSeconds: priorStep,
  };
}

/** Seconds a job needs to finish from `stepsDone`, alone on its devices. */
export const remainingSeconds = (plan: JobPlan, steps: number, stepsDone: number, pace = 1) =>
  Math.max(0, steps - stepsDone) * pacedStepSeconds(plan, pace);

/**
 * A plan's step with the part the prior still prices (`1 − confidence`) at the pool's pace: how its
 * measured jobs run against the prior (pace.ts). A job that has not run yet is priced at the prior
 * alone, and the prior knows the engine's compute, not the machine it shares nor the overhead of a
 * step around it: on a loaded 2-core machine the pool's fresh jobs ran 3.7× the prior's step, and
 * every estimate behind them came that much early.
 */
export const pacedStepSeconds = (plan: JobPlan, pace: number) =>
  plan.stepSeconds + (1 - plan.confidence) * (plan.priorStepSeconds ?? 0) * (pace - 1);
