/**
 * The reactive balancer of a spatial job (OrchestrRL's reactive loop, DESIGN §4), as pure
 * functions: the stage loop measures, this decides. The proactive re-planner
 * (scheduler/planner/replan.ts) moves whole jobs through the queue when a model predicts a better
 * plan; this loop runs inside the job's own run, every step, and moves one device at a time between
 * generation and training within the devices the job was placed on.
 *
 * What is measured, per side, over a window of whole steps:
 *   busy   seconds the side held its devices (onload, compute, offload): its service time;
 *   wait   seconds the side waited on the other: the generator blocked because the micro-batch pipe
 *          was full or the weight-lag gate was shut (training is the bottleneck), the learner
 *          starved for a micro-batch (generation is).
 * The imbalance score, in −1…1, is the mean of two normalised differences — the sides'
 * utilisations (busy over wall time: load over capacity, since a side's busy time already reflects
 * its device count) and their queueing (the learner's starvation less the generator's blocking,
 * over wall time). Positive: generation is over-loaded; negative: training is.
 *
 * A move is taken only when it is worth it: |score| past the threshold (a reversal of the last
 * move needs the higher `reverseThreshold`: hysteresis), no decision within `cooldownSteps` of a
 * move, never below one device per side, and the step predicted after the move (each side's
 * service time scaled by its device count, the step by the bottleneck) must be `minGain` faster and
 * the gain over the remaining steps must beat the move's cost (measured after the first move).
 */

export interface BalancerConfig {
  /** |imbalance| past which a move is considered. */
  threshold: number;
  /** |imbalance| a move in the opposite direction of the last one needs (≥ threshold). */
  reverseThreshold: number;
  /** Whole steps measured before a decision (the window restarts after a move). */
  windowSteps: number;
  /** Steps after a move before the next decision (≥ windowSteps + 1: the step after a move refills the pipe). */
  cooldownSteps: number;
  /** Least predicted gain, as a share of the measured step time. */
  minGain: number;
  /** Seconds a move is assumed to cost before one has been measured. */
  priorMoveSeconds: number;
}

export const defaultBalancerConfig: BalancerConfig = {
  threshold: 0.25,
  reverseThreshold: 0.5,
  windowSteps: 3,
  cooldownSteps: 4,
  minGain: 0.1,
  priorMoveSeconds: 1,
};

export interface SideMeasure {
  devices: number;
  /** Seconds holding its devices over the window. */
  busySeconds: number;
  /** Seconds waiting on the other side over the window (generator blocked / learner starved). */
  waitSeconds: number;
}

export interface BalanceWindow {
  steps: number;
  wallSeconds: number;
  generate: SideMeasure;
  train: SideMeasure;
}

export type MoveDirection = 'to_generate' | 'to_train';

export interface BalancerState {
  /** Steps completed since the last move (or since the start). */
  stepsSinceMove: number;
  lastMove: MoveDirection | null;
  /** Measured seconds of the last move, if one was taken. */
  measuredMoveSeconds: number | null;
  remainingSteps: number;
}

export interface BalanceDecision {
  move: MoveDirection | null;
  /** Why not, when no move; 'move' when one. */
  reason: 'measuring' | 'cooldown' | 'balanced' | 'at_minimum' | 'not_faster' | 'does_not_pay' | 'move';
  imbalance: number;
  stepSeconds: number;
  predictedStepSeconds: number;
  moveCostSeconds: number;
}

const clamp = (x: number) => Math.max(-1, Math.min(1, x));

/** The imbalance score of a window: > 0 generation over-loaded, < 0 training; 0 without data. */
export function imbalanceScore(w: BalanceWindow): number {
  if (!(w.wallSeconds > 0)) return 0;
  const util = (w.generate.busySeconds - w.train.busySeconds) / w.wallSeconds;
  const queue = (w.train.waitSeconds - w.generate.waitSeconds) / w.wallSeconds;
  return clamp((clamp(util) + clamp(queue)) / 2);
}

/** The step time predicted if one device moves: each side's service time scales with 1/devices. */
export function predictAfterMove(w: BalanceWindow, move: MoveDirection): number {
  const g = w.generate.devices;
  const t = w.train.devices;
  const [g2, t2] = move === 'to_generate' ? [g + 1, t - 1] : [g - 1, t + 1];
  const step = w.wallSeconds / Math.max(1, w.steps);
  const sg = w.generate.busySeconds / Math.max(1, w.steps);
  const st = w.train.busySeconds / Math.max(1, w.steps);
  const bottleneck = Math.max(sg, st);
  if (!(bottleneck > 0) || g2 < 1 || t2 < 1) return step;
  return (step * Math.max((sg * g) / g2, (st * t) / t2)) / bottleneck;
}

export function decideBalance(w: BalanceWindow, s: BalancerState, c: BalancerConfig): BalanceDecision {
  const imbalance = imbalanceScore(w);
  const stepSeconds = w.steps > 0 ? w.wallSeconds / w.steps : 0;
  const moveCostSeconds = s.measuredMoveSeconds ?? c.priorMoveSeconds;
  const none = (reason: BalanceDecision['reason']): BalanceDecision => ({
    move: null,
    reason,
    imbalance,
    stepSeconds,
    predictedStepSeconds: stepSeconds,
    moveCostSeconds,
  });
  if (s.lastMove !== null && s.stepsSinceMove < c.cooldownSteps) return none('cooldown');
  if (w.steps < c.windowSteps) return none('measuring');
  const move: MoveDirection = imbalance > 0 ? 'to_generate' : 'to_train';
  const reversal = s.lastMove !== null && s.lastMove !== move;
  if (Math.abs(imbalance) < (reversal ? c.reverseThreshold : c.threshold)) return none('balanced');
  const donor = move === 'to_generate' ? w.train.devices : w.generate.devices;
  if (donor < 2) return none('at_minimum');
  const predicted = predictAfterMove(w, move);
  const gain = stepSeconds - predicted;
  const decided = { ...none('move'), predictedStepSeconds: predicted };
  if (gain < c.minGain * stepSeconds) return { ...decided, move: null, reason: 'not_faster' };
  if (gain * s.remainingSteps <= moveCostSeconds) return { ...decided, move: null, reason: 'does_not_pay' };
  return { ...decided, move };
}

/** The device indexes after moving one: generation takes the front of the job's devices, training the back. */
export function movedStages(
  stages: { generate: number[]; train: number[] },
  move: MoveDirection,
): { generate: number[]; train: number[] } {
  const all = [...new Set([...stages.generate, ...stages.train])].sort((a, b) => a - b);
  const g = stages.generate.length + (move === 'to_generate' ? 1 : -1);
  return { generate: all.slice(0, g), train: all.slice(g) };
}
