/**
 * Re-planning a running job (OrchestrRL's proactive loop): as its profiles arrive, the plan the
 * model now predicts fastest on the job's devices may differ from the one it runs. The job is moved
 * in place (checkpoint, release, placed again on the same devices with the new plan, before anyone
 * else: pool-round.ts `returnMovedJobs`) only when the predicted gain over its
 * remaining steps beats the cost of the move; either way the decision is recorded, once per shift
 * of the prediction, and after a move the measured gain is recorded once the job has run enough
 * steps in its new placement to say.
 */
import type { JobPlan, Policy, ProfileSummary, RunningJob, Workload } from '../core/types.js';
import { planJob } from './plan-job.js';
import { ranMinimum } from '../core/min-run.js';

/** What the round needs to re-plan a running job (production fills it; the simulator does not). */
export interface ReplanInput {
  workload: Workload;
  profile: ProfileSummary | null;
  /** Engine threads per device of its placement (the plan it runs was priced with them). */
  threadsPerDevice?: number;
  /** The job's latest re-planning event, if any. */
  last: { kind: ReplanKind; at: number; predictedStepSeconds: number; beforeStepSeconds: number } | null;
  /** Steps and mean wall seconds per step since the current placement (null before two steps). */
  sincePlaced: { steps: number; stepSeconds: number } | null;
  /** A `job.plan_fitted` event is recorded for the current placement already. */
  fitted?: boolean;
}

export type ReplanKind = 'move' | 'decline' | 'measured' | 'fitted';

/** The job event each decision is recorded as. */
export const replanEventTypes: Record<ReplanKind, string> = {
  move: 'job.replanned',
  decline: 'job.replan_declined',
  measured: 'job.replan_measured',
  fitted: 'job.plan_fitted',
};

/** The events a later decision is measured against (`fitted` is a record, not a decision). */
export const decisionEventTypes = [
  replanEventTypes.move,
  replanEventTypes.decline,
  replanEventTypes.measured,
];

export interface PlanShape {
  mode: JobPlan['mode'];
  generateDevices: number;
  trainDevices: number;
  microBatches: number;
  predictedStepSeconds: number;
}

export interface ReplanDecision {
  jobId: string;
  tenantId: string;
  kind: ReplanKind;
  /** The prediction the decision was taken on (what a later shift is measured against). */
  predictedStepSeconds: number;
  /** The step time the job had before (current plan, measured where it has profiles). */
  beforeStepSeconds: number;
  from: PlanShape;
  to: PlanShape;
  remainingSteps: number;
  predictedGainSeconds: number;
  moveCostSeconds: number;
  /**
   * `decline` only: why. `does_not_pay`: the gain over the remaining steps is no more than the
   * move's cost. `shared_devices`: the new plan would not fit the job's devices beside the jobs that
   * share them in time (its load or memory over the group's bounds), so it could not come back to
   * them; moving it would send it to the back of the queue instead.
   */
  reason?: 'does_not_pay' | 'shared_devices';
  /** `measured` only: the step time in the new placement and the gain it gives over the remaining steps. */
  measuredStepSeconds?: number;
  measuredGainSeconds?: number;
  /** `fitted` only: profiled steps the prediction is fitted to, and its confidence. */
  samples?: number;
  confidence?: number;
}

/** Profiled steps before a plan is trusted enough to move a job for. */
const MIN_SAMPLES = 5;
/** A new decision only once the prediction has moved this much since the last one. */
const SHIFT = 0.2;
/**
 * A plan predicted less than this much faster per step is within the model's error and is not a
 * decision at all: predicting one mode from another mode's profile was 29% off in bench:planner,
 * and on a loaded 2-core CI machine a temporal profile once priced a spatial split 12% faster
 * that then measured 27% slower.
 */
export const MIN_STEP_GAIN = 0.15;
/** Host copy of a checkpoint's bytes, when nothing measured says otherwise. */
const CHECKPOINT_BYTES_PER_SECOND = 1e9;

const shapeOf = (p: JobPlan): PlanShape => ({
  mode: p.mode,
  generateDevices: p.generateDevices,
  trainDevices: p.trainDevices,
  microBatches: p.microBatches,
  predictedStepSeconds: p.predictedStepSeconds,
});

const sameShape = (a: PlanShape, b: PlanShape) =>
  a.mode === b.mode &&
  a.generateDevices === b.generateDevices &&
  a.trainDevices === b.trainDevices &&
  a.microBatches === b.microBatches;

/**
 * The decision for one running job this round, or null (nothing to decide). A move keeps the job's
 * devices (they come back to it first), so it is taken in a pool where others wait as well.
 */
export function considerReplan(
  job: RunningJob,
  input: ReplanInput,
  policy: Policy,
  now: number,
  fitsItsDevices: (plan: JobPlan) => boolean = () => true,
): ReplanDecision | null {
  if (job.preemptRequestedAt !== null || input.workload.mode !== 'auto') return null;
  const remainingSteps = Math.max(0, job.steps - job.stepsDone);
  const last = input.last;
  const base = { jobId: job.id, tenantId: job.tenantId, remainingSteps };

  // After a move: the gain as measured, once the new placement has run enough steps.
  if (last?.kind === 'move') {
    const since = input.sincePlaced;
    if (job.placedAt <= last.at || !since || since.steps < MIN_SAMPLES) return null;
    const shape = shapeOf(job.plan);
    return {
      ...base,
      kind: 'measured',
      predictedStepSeconds: last.predictedStepSeconds,
      beforeStepSeconds: last.beforeStepSeconds,
      from: shape,
      to: shape,
      predictedGainSeconds: (last.beforeStepSeconds - last.predictedStepSeconds) * remainingSteps,
      moveCostSeconds: 0,
      measuredStepSeconds: since.stepSeconds,
      measuredGainSeconds: (last.beforeStepSeconds - since.stepSeconds) * remainingSteps,
    };
  }
  if (!input.profile || input.profile.samples < MIN_SAMPLES) return null;
  if (!ranMinimum(job, policy, now)) return null;

  const best = planJob({
    workload: input.workload,
    devices: job.devices.length,
    maxDevices: job.devices.length,
    memoryPerDeviceBytes: null,
    profile: input.profile,
    threadsPerDevice: input.threadsPerDevice ?? 1,
  });
  const from = shapeOf(job.plan);
  const to = shapeOf(best);
  if (sameShape(from, to)) return null;
  // The split inside a spatial placement is the worker's reactive balancer's (worker-node/balancer.ts):
  // it moves a device in place, from measured queueing, for far less than a move through the queue.
  // A plan that differs only there is left to it; `from` is the split the job runs at now.
  if (from.mode === 'spatial' && to.mode === 'spatial' && from.microBatches === to.microBatches) return null;
  const before = job.plan.stepSeconds;
  const after = best.stepSeconds;
  if (last && Math.abs(after / last.predictedStepSeconds - 1) < SHIFT) return null;

  if (after > before * (1 - MIN_STEP_GAIN)) return null;
  const predictedGainSeconds = (before - after) * remainingSteps;
  // The move: the step in flight is lost (half of one on average), the state is checkpointed and
  // offloaded, the job waits for a round and starts again, and onloads on its new devices.
  const moveCostSeconds =
    before / 2 +
    job.plan.hostBytes / CHECKPOINT_BYTES_PER_SECOND +
    job.plan.switchSeconds +
    policy.restartSeconds;
  const pays = predictedGainSeconds > moveCostSeconds;
  const fits = fitsItsDevices(best);
  return {
    ...base,
    kind: pays && fits ? 'move' : 'decline',
    ...(pays && fits ? {} : { reason: pays ? 'shared_devices' : 'does_not_pay' }),
    // The whole step (off-device time included), as `before` and the measured step are.
    predictedStepSeconds: after,
    beforeStepSeconds: before,
    from,
    to,
    predictedGainSeconds,
    moveCostSeconds,
  };
}

/**
 * The prediction for the plan a job runs, once it has run 5 profiled steps in its placement: the
 * round's step time for it (the fit to its own profiles, off-device time included), recorded once
 * per placement as `job.plan_fitted`, so what the model predicts can be set beside what the job
 * then measures.
 */
export function considerFitted(job: RunningJob, input: ReplanInput): ReplanDecision | null {
  if (input.fitted || !input.profile || input.profile.samples < MIN_SAMPLES) return null;
  // Every stage measured 5 times past its warm-up: the prediction is the fit's, not the prior's.
  if (job.plan.confidence < 1) return null;
  if (!input.sincePlaced || input.sincePlaced.steps < MIN_SAMPLES) return null;
  const shape = shapeOf(job.plan);
  return {
    jobId: job.id,
    tenantId: job.tenantId,
    kind: 'fitted',
    predictedStepSeconds: job.plan.stepSeconds,
    beforeStepSeconds: job.plan.stepSeconds,
    from: shape,
    to: shape,
    remainingSteps: Math.max(0, job.steps - job.stepsDone),
    predictedGainSeconds: 0,
    moveCostSeconds: 0,
    samples: input.profile.samples,
    confidence: job.plan.confidence,
  };
}
