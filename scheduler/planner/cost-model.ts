/**
 * The cost model: how long one call of a stage takes for a batch on some devices, and what a hold
 * costs in switching. One module; the scheduler (through planJob), the plan search, the benchmarks
 * and the simulator read costs from here.
 *
 * Compute time is a low-degree fit in batch and 1/devices, as RLinf extrapolates its profiles:
 *
 *     t(b, n) = θ0 + θ1 · b / n + θ2 · b
 *
 * θ0 is a per-call overhead, θ1 the work that spreads over devices, θ2 the work that does not
 * (sampling, the tails of small matrices). Before any profile the θ come from a prior (the model's
 * size, the tokens per sequence and the pool's threads per device); profiles replace it through a
 * ridge fit centred on the prior rescaled to the measurements, so one measured shape moves every
 * prediction and several shapes also fix how the stage scales.
 */
import { solveLinear } from './linear.js';

/** One measured shape of one stage: medians over the calls made at that batch and device count. */
export interface StageSample {
  stage: string;
  batch: number;
  devices: number;
  /** Median seconds of the stage's work in one call (the hold less onload and offload). */
  computeSeconds: number;
  /** Median onload + offload seconds of one hold. */
  switchSeconds: number;
  /** Calls the medians are drawn from. */
  count: number;
  /**
   * Mean share of the stage's sequence slots busy over a call (generation: the rest is the
   * stragglers' tail, which does not shrink with more devices and which a stage streaming on
   * devices of its own refills). Absent when the engine does not report it.
   */
  occupancy?: number;
  /**
   * The calls stopped early for partial rollouts (once all but a share of their groups had ended):
   * their time is already without most of the tail, and their occupancy measures what was left of it.
   */
  partial?: boolean;
}

/** What the prior needs to know about a job and the devices it would run on. */
export interface ModelFacts {
  parameters: number;
  /** Tokens per sequence (prompt and completion). */
  sequenceTokens: number;
  /** Engine threads per device in the pool (a CPU "device" here; a GPU counts as its SM share). */
  threadsPerDevice: number;
}

export interface StageCoefficients {
  fixed: number;
  parallel: number;
  serial: number;
  /**
   * Seconds per call the stragglers add after the slots' work (from a measured occupancy): neither
   * more devices nor a smaller batch shorten it, and a stage streaming on devices of its own hides it.
   */
  tail?: number;
  /**
   * Seconds per call of the tail left in a call that stops early for partial rollouts (measured on
   * such calls): what a temporal plan with them still waits for. Absent until such calls are measured.
   */
  partialTail?: number;
}

/**
 * The engine's figures per token and parameter, measured on this machine kind (one thread per
 * device; the tiny and small presets, 64–512 sequences, generation and training apart).
 */
const PRIOR_PER_TOKEN_PARAMETER: Record<string, { parallel: number; serial: number; fixed: number }> = {
  generate: { parallel: 8e-12, serial: 3e-12, fixed: 1e-3 },
  reward: { parallel: 0, serial: 1e-13, fixed: 2e-4 },
  reference: { parallel: 2.8e-11, serial: 1.5e-12, fixed: 1e-3 },
  train: { parallel: 8.5e-11, serial: 4e-12, fixed: 2e-3 },
  sync: { parallel: 0, serial: 0, fixed: 5e-4 },
};
/** Offload and onload: a fixed cost each way plus the state's bytes at the engine's measured copy bandwidth (bench:engine: 7.8 GB/s). */
const SWITCH_FIXED_SECONDS = 1e-3;
const SWITCH_BYTES_PER_SECOND = 7.8e9;
/** Bytes of state per parameter: fp32 weights, gradients and two AdamW moments. */
export const STATE_BYTES_PER_PARAMETER = 16;
/** Pull toward the rescaled prior; small, so a few shapes of measurements outweigh it. */
const RIDGE = 0.05;
/** Calls of a stage after which the fit is trusted fully. */
const CONFIDENT_AFTER = 5;

export function priorCoefficients(stage: string, facts: ModelFacts): StageCoefficients {
  const p = PRIOR_PER_TOKEN_PARAMETER[stage] ?? PRIOR_PER_TOKEN_PARAMETER.train!;
  const work = (facts.sequenceTokens * facts.parameters) / Math.max(1, facts.threadsPerDevice);
  return { fixed: p.fixed, parallel: p.parallel * work, serial: p.serial * work };
}

export function priorSwitchSeconds(stage: string, facts: ModelFacts): number {
  // Generation needs the weights on the device, training the whole optimizer state.
  const bytes =
    facts.parameters * (stage === 'generate' || stage === 'reward' ? 4 : STATE_BYTES_PER_PARAMETER);
  return 2 * (SWITCH_FIXED_SECONDS + bytes / SWITCH_BYTES_PER_SECOND);
}

const features = (batch: number, devices: number) => [1, batch / Math.max(1, devices), batch];
const dot = (c: StageCoefficients, x: number[]) =>
  c.fixed * x[0]! + c.parallel * x[1]! + c.serial * x[2]! + (c.tail ?? 0);

/**
 * The ridge fit in relative terms (each sample's error as a share of its time, so a 10 ms stage
 * counts as much as a 1 s one), centred on the prior scaled by the samples' geometric mean ratio.
 */
export function fitStage(prior: StageCoefficients, samples: readonly StageSample[]): StageCoefficients {
  const measured = samples.filter((s) => s.computeSeconds > 0 && s.batch > 0 && s.devices > 0);
  if (measured.length === 0) return prior;
  // Calls that ran to their end and calls stopped early for partial rollouts each keep their own
  // tail; the slots' work under both is the same, and that is what is fitted.
  const whole = measured.filter((s) => !s.partial);
  const stopped = measured.filter((s) => s.partial);
  const partialTail = stopped.length ? tailOf(stopped) : undefined;
  // Without a call that ran to its end, the shortened calls' tail is the best known.
  const tail = whole.length ? tailOf(whole) : (partialTail ?? 0);
  const tails = {
    ...(tail > 0 ? { tail } : {}),
    ...(partialTail !== undefined ? { partialTail } : {}),
  };
  const usable = measured
    .map((s) => ({ ...s, computeSeconds: s.computeSeconds - (s.partial ? partialTail! : tail) }))
    .filter((s) => s.computeSeconds > 0);
  if (usable.length === 0) return { ...prior, ...tails };
  let logRatio = 0;
  let weight = 0;
  for (const s of usable) {
    logRatio +=
      s.count * Math.log(s.computeSeconds / Math.max(1e-12, dot(prior, features(s.batch, s.devices))));
    weight += s.count;
  }
  const k = Math.exp(logRatio / weight);
  const centre = [prior.fixed * k, prior.parallel * k, prior.serial * k];
  if (tail > 0 || (partialTail ?? 0) > 0) {
    // With the tail measured apart, the rest is the slots' work, and slots come with devices.
    const ref = usable.reduce((a, s) => (s.count > a.count ? s : a));
    const x = features(ref.batch, ref.devices);
    centre[1] = (centre[1]! * x[1]! + centre[2]! * x[2]!) / x[1]!;
    centre[2] = 0;
  }
  // Solve for u in θ = centre · (1 + u): minimise Σ w (A u − y)² + RIDGE · |u|².
  const ata = [
    [RIDGE, 0, 0],
    [0, RIDGE, 0],
    [0, 0, RIDGE],
  ];
  const aty = [0, 0, 0];
  for (const s of usable) {
    const x = features(s.batch, s.devices);
    const a = x.map((xi, i) => (centre[i]! * xi) / s.computeSeconds);
    const predicted = centre[0]! * x[0]! + centre[1]! * x[1]! + centre[2]! * x[2]!;
    const y = (s.computeSeconds - predicted) / s.computeSeconds;
    const w = Math.sqrt(s.count);
    for (let i = 0; i < 3; i++) {
      aty[i] = aty[i]! + w * a[i]! * y;
      for (let j = 0; j < 3; j++) ata[i]![j] = ata[i]![j]! + w * a[i]! * a[j]!;
    }
  }
  const u = solveLinear(ata, aty) ?? [0, 0, 0];
  // A coefficient never goes negative: a fit that wants it below zero keeps none of that term.
  const coef = centre.map((c, i) => Math.max(0, c * (1 + u[i]!)));
  return { fixed: coef[0]!, parallel: coef[1]!, serial: coef[2]!, ...tails };
}

/**
 * A measured occupancy says how much of a call is the slots' work (which spreads over devices, as
 * the slots come with them, and scales with the batch) and how much the stragglers' tail (a per-call
 * latency): the most-measured shape's tail is taken out of every sample before the fit, and
 * returned with the coefficients.
 */
function tailOf(samples: readonly StageSample[]): number {
  const occupancy = meanOccupancy(samples);
  if (occupancy === null) return 0;
  const ref = samples.reduce((a, s) => (s.count > a.count ? s : a));
  return (1 - occupancy) * ref.computeSeconds;
}

function meanOccupancy(samples: readonly StageSample[]): number | null {
  let sum = 0;
  let n = 0;
  for (const s of samples)
    if (s.occupancy !== undefined && s.occupancy > 0) {
      sum += s.count * Math.min(1, s.occupancy);
      n += s.count;
    }
  return n > 0 ? sum / n : null;
}

export interface StageModel {
  coefficients: StageCoefficients;
  /** Onload + offload of one hold. */
  switchSeconds: number;
  /** 0..1: how far the figures come from this job's own measurements. */
  confidence: number;
  /** Measured slot occupancy (null: not reported, the stage is taken to have no tail to hide). */
  occupancy: number | null;
}

/** A job's model: one fitted stage model per stage it runs. */
export class CostModel {
  private readonly stages = new Map<string, StageModel>();

  constructor(
    readonly facts: ModelFacts,
    stageNames: readonly string[],
    samples: readonly StageSample[] = [],
  ) {
    for (const stage of stageNames) {
      const own = samples.filter((s) => s.stage === stage);
      const calls = own.reduce((a, s) => a + s.count, 0);
      const switches = own.filter((s) => s.switchSeconds > 0);
      const measuredSwitch = switches.length
        ? switches.reduce((a, s) => a + s.count * s.switchSeconds, 0) /
          switches.reduce((a, s) => a + s.count, 0)
        : null;
      this.stages.set(stage, {
        coefficients: fitStage(priorCoefficients(stage, facts), own),
        switchSeconds: measuredSwitch ?? priorSwitchSeconds(stage, facts),
        confidence: Math.min(1, calls / CONFIDENT_AFTER),
        occupancy: meanOccupancy(own),
      });
    }
  }

  stage(name: string): StageModel {
    const s = this.stages.get(name);
    if (!s) throw new Error(`no cost model for stage ${name}`);
    return s;
  }

  /** Seconds of one call's work on `batch` sequences over `devices` devices. */
  computeSeconds(stage: string, batch: number, devices: number): number {
    return dot(this.stage(stage).coefficients, features(batch, devices));
  }

  /**
   * Seconds a call adds in steady state when the stage streams on devices of its own: without the
   * tail that does not spread over devices (the same as `computeSeconds` when no occupancy is known).
   */
  streamedSeconds(stage: string, batch: number, devices: number): number {
    const c = this.stage(stage).coefficients;
    return this.computeSeconds(stage, batch, devices) - (c.tail ?? 0);
  }

  /**
   * Seconds a call takes when it stops early for partial rollouts: the slots' work and the tail
   * measured on such calls (the streamed time until they are measured, which is optimistic by the
   * part of the tail a group-level stop still waits for).
   */
  partialSeconds(stage: string, batch: number, devices: number): number {
    return this.streamedSeconds(stage, batch, devices) + (this.stage(stage).coefficients.partialTail ?? 0);
  }

  switchSeconds(stage: string): number {
    return this.stage(stage).switchSeconds;
  }

  /** The least-measured stage sets the job's confidence: a plan is as sure as its weakest part. */
  get confidence(): number {
    let c = 1;
    for (const s of this.stages.values()) c = Math.min(c, s.confidence);
    return this.stages.size ? c : 0;
  }
}
