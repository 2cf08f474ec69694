/**
 * What a job wants and what it costs: devices, mode, step time, idle share, switch cost, memory.
 * This is the one function the stage-level planner (issue 12) replaces; the round, the ETA and the
 * simulator all read plans from here. Until then: measured figures when the job has profiles
 * (confidence grows with samples), else a prior from the model size and the engine's measured speeds.
 */
import type { JobPlan, ProfileSummary, Workload } from './types.js';

/** The engine's measured speeds for the tiny preset on 2 threads (README, bench:engine), as a prior. */
const PRIOR = {
  referenceParameters: 400_000,
  trainTokensPerSecond: 41_000,
  generateTokensPerSecond: 116_000,
  /** Offload/onload bandwidth (bench:engine: ~7.8 GB/s). */
  switchBytesPerSecond: 7.8e9,
  /** Share of a step spent outside device holds (reward, bookkeeping, reports) before profiles say. */
  idleFraction: 0.2,
  /** Bytes of state per parameter: weights, gradients and two AdamW moments, fp32. */
  stateBytesPerParameter: 16,
};

/** Parameters of a model from the spec's preset or sizes (a decoder: 12·L·d² plus embeddings). */
export function modelParameters(model: { preset?: string; layers?: number; dModel?: number }): number {
  const preset = { micro: [2, 64], tiny: [2, 128], small: [2, 256] }[model.preset ?? 'tiny'] ?? [2, 128];
  const layers = model.layers ?? preset[0]!;
  const d = model.dModel ?? preset[1]!;
  return 12 * layers * d * d + 2 * 16 * d;
}

export interface PlanInput {
  workload: Workload;
  devices: number;
  maxDevices: number;
  memoryPerDeviceBytes: number | null;
  profile: ProfileSummary | null;
}

export function planJob(input: PlanInput): JobPlan {
  const w = input.workload;
  const mode = w.mode === 'spatial' && input.devices >= 2 ? 'spatial' : 'temporal';
  const stateBytes = w.parameters * PRIOR.stateBytesPerParameter;
  const scale = PRIOR.referenceParameters / Math.max(1, w.parameters);
  const sequences = w.promptsPerStep * w.groupSize;
  const generate = (sequences * w.sequenceTokens) / (PRIOR.generateTokensPerSecond * scale);
  const train = (sequences * w.sequenceTokens) / (PRIOR.trainTokensPerSecond * scale);
  const priorSwitch = (2 * stateBytes) / PRIOR.switchBytesPerSecond;
  const priorBusy = (generate + train) / input.devices;
  const priorStep = priorBusy / (1 - PRIOR.idleFraction);
  const activationBytes = sequences * w.sequenceTokens * Math.sqrt(w.parameters) * 4;
  const priorDeviceBytes = stateBytes + activationBytes / input.devices;

  const p = input.profile;
  const confidence = p ? Math.min(1, p.samples / 5) : 0;
  const mix = (measured: number, prior: number) => confidence * measured + (1 - confidence) * prior;
  const stepSeconds = p ? mix(p.stepSeconds, priorStep) : priorStep;
  const switchSeconds = p ? mix(p.switchSeconds, priorSwitch) : priorSwitch;
  const busySeconds = p ? mix(Math.max(0, p.busySeconds - p.switchSeconds), priorBusy) : priorBusy;
  const measuredBytes = p && p.peakBytes > 0 ? p.peakBytes : priorDeviceBytes;
  return {
    devicesMin: input.devices,
    devicesMax: Math.max(input.devices, input.maxDevices),
    mode,
    stepSeconds,
    busyFraction: Math.min(1, busySeconds / Math.max(stepSeconds, 1e-9)),
    switchSeconds,
    // An explicit request is honoured as the job's reservation on each device.
    deviceBytes: input.memoryPerDeviceBytes ?? measuredBytes,
    hostBytes: stateBytes,
    confidence,
  };
}

/** Seconds a job needs to finish from `stepsDone`, alone on its devices. */
export const remainingSeconds = (plan: JobPlan, steps: number, stepsDone: number) =>
  Math.max(0, steps - stepsDone) * plan.stepSeconds;
