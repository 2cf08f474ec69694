/**
 * The minimum run time between preemptions (`Policy.minRunSeconds`): no notice of any kind — a
 * preemption, a move, a re-plan — reaches a job before it has run this long since its job process
 * started. Counted from the start of the run, not the placement: a job still `placed` (its node
 * onloading it, or slow to start on a loaded machine) has lost nothing yet, and the guarantee is
 * about the time it gets to compute.
 */
import type { Policy, RunningJob } from './types.js';

export function ranMinimum(job: RunningJob, policy: Policy, now: number): boolean {
  const since = job.runningSince === undefined ? job.placedAt : job.runningSince;
  return since !== null && now - since >= policy.minRunSeconds * 1000;
}
