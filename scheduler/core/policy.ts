/** The policy's defaults and the baselines the simulator compares against. */
import type { Policy } from './types.js';

export const defaultPolicy: Policy = {
  maxJobsPerDevice: 2,
  // Up to two saturated jobs per device (each then runs at about half speed): like an OS's time
  // slices, a shared device lets a second tenant's job progress rather than wait for the first to
  // end, and where jobs idle (reward, environment, generation tails) it fills those holes.
  maxGroupLoad: 2,
  maxSwitchFraction: 0.1,
  timeSharing: true,
  fairShare: true,
  backfill: true,
  preemption: true,
  minRunSeconds: 60,
  preemptGraceSeconds: 30,
  agingBoundSeconds: 3600,
  usageHistoryWeight: 0.5,
  crashBackoffSeconds: 5,
};

/** Whole devices per job, strict arrival order, nothing preempted: a Slurm-like FIFO. */
export const exclusiveFifoPolicy: Policy = {
  ...defaultPolicy,
  timeSharing: false,
  fairShare: false,
  backfill: false,
  preemption: false,
};

/** Quotas, weighted fair share, backfill and reclaim, but whole devices per job: Kueue-like. */
export const kueueLikePolicy: Policy = { ...defaultPolicy, timeSharing: false };
