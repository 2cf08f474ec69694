/**
 * The pool's pace: how its measured jobs' steps run against what the planner's prior said of them
 * (median of measured ÷ prior over running jobs whose plans are fully measured and that have their
 * devices to themselves, so a partner's turns are not counted as slowness). The estimates price the
 * part of a step the prior still stands for at this pace (plan-job.ts `pacedStepSeconds`): the prior
 * is a size-based guess of compute alone, and a job just placed, or one never run, would otherwise
 * be predicted to end as fast as the guess says while every measured job of the pool says otherwise.
 */
import type { RunningJob } from './types.js';

/** Bounds on the pace: one odd pool (a single measured job, a machine paused) moves no estimate further. */
const PACE_MIN = 0.25;
const PACE_MAX = 4;

export function poolPace(running: Iterable<RunningJob>, alone: (r: RunningJob) => boolean): number {
  const ratios: number[] = [];
  for (const r of running) {
    const prior = r.plan.priorStepSeconds ?? 0;
    if (r.plan.confidence < 1 || prior <= 0 || r.preemptRequestedAt !== null || !alone(r)) continue;
    ratios.push(r.plan.stepSeconds / prior);
  }
  if (ratios.length === 0) return 1;
  ratios.sort((a, b) => a - b);
  const mid = ratios.length >> 1;
  const median = ratios.length % 2 ? ratios[mid]! : (ratios[mid - 1]! + ratios[mid]!) / 2;
  return Math.min(PACE_MAX, Math.max(PACE_MIN, median));
}
