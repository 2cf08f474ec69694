/**
 * Draws one step of a job as a sequence of phases: `held` phases run under the device lock on all
 * the job's devices, the others leave its devices idle (environment latency, reward and verifier
 * time), which is the time another job may fill. Consecutive held phases merge: a job that trains
 * and then syncs weights keeps the lock in between, as the worker does.
 */
import type { Rng } from './rng.js';
import type { StepShape } from './model.js';

/**
 * `generate` holds need the weights on the device; `train` holds (training and the weight sync)
 * the whole training state; `checkpoint` writes it out, and when it ends the steps so far are safe.
 */
export type PhaseKind = 'generate' | 'idle' | 'train' | 'checkpoint';

export interface Phase {
  kind: PhaseKind;
  held: boolean;
  seconds: number;
}

/** Sequences whose completion lengths set one turn's generation time (a batch's stragglers). */
const SEQUENCES = 64;

/**
 * The ratio of a batch's longest completion to the median, averaged over batches, so that a turn
 * lasts `generateSeconds` on average while single steps vary with their own stragglers.
 */
export function meanTailFactor(sigma: number, rng: Rng, samples = 200): number {
  if (sigma <= 0) return 1;
  let sum = 0;
  for (let i = 0; i < samples; i++) sum += tailFactor(sigma, rng);
  return sum / samples;
}

function tailFactor(sigma: number, rng: Rng): number {
  let max = 0;
  for (let i = 0; i < SEQUENCES; i++) max = Math.max(max, rng.lognormal(1, sigma));
  return max;
}

export function drawStep(
  shape: StepShape,
  rng: Rng,
  meanFactor: number,
  checkpointSeconds: number | null,
): Phase[] {
  const phases: Phase[] = [];
  const push = (kind: PhaseKind, seconds: number) => {
    if (seconds <= 0) return;
    const last = phases[phases.length - 1];
    if (last && last.kind === kind) last.seconds += seconds;
    else phases.push({ kind, held: kind !== 'idle', seconds });
  };
  for (let t = 0; t < shape.turns; t++) {
    const f = shape.tailSigma > 0 ? tailFactor(shape.tailSigma, rng) / meanFactor : 1;
    push('generate', shape.generateSeconds * f);
    push('idle', shape.envSeconds);
  }
  push('idle', shape.rewardSeconds);
  push('train', shape.trainSeconds);
  push('train', shape.syncSeconds);
  if (checkpointSeconds !== null) push('checkpoint', checkpointSeconds);
  return phases;
}
