/**
 * When a running job may be given a notice. The minimum run time between preemptions
 * (`Policy.minRunSeconds`): no notice of any kind — a preemption, a move, a re-plan — reaches a job
 * before it has run this long since its job process started. Counted from the start of the run, not
 * the placement: a job still `placed` (its node onloading it, or slow to start on a loaded machine)
 * has lost nothing yet, and the guarantee is about the time it gets to compute.
 */
import { remainingSeconds } from '../planner/plan-job.js';
import type { Policy, RunningJob } from './types.js';

export function ranMinimum(job: RunningJob, policy: Policy, now: number): boolean {
  const since = job.runningSince === undefined ? job.placedAt : job.runningSince;
  return since !== null && now - since >= policy.minRunSeconds * 1000;
}

/**
 * A measured job predicted to end within the grace period frees its devices no later by ending
 * than by a notice, and a notice would cost it a checkpoint and a restart for nothing: a QA run saw
 * a job preempted for priority 11 s before its last step, its grace 15 s. The prior's guesses
 * (confidence under 1) are not trusted with this.
 */
export function endsWithinGrace(job: RunningJob, policy: Policy): boolean {
  return (
    job.plan.confidence >= 1 &&
    remainingSeconds(job.plan, job.steps, job.stepsDone) <= policy.preemptGraceSeconds
  );
}

/** Whether a preemption or a move may reach the job now (re-planning and spreading weigh their own gains). */
export const mayNotice = (job: RunningJob, policy: Policy, now: number): boolean =>
  ranMinimum(job, policy, now) && !endsWithinGrace(job, policy);
