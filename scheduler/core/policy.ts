/** The policy's defaults and the baselines the simulator compares against. */
import type { Policy } from './types.js';

export const defaultPolicy: Policy = {
  // Up to three jobs take turns on a device, wanting up to 2.4× its time together: three jobs on the
  // planner's prior of 20% idle fill one device. Steps are irregular (generation's tail, rewards,
  // environments), so a pair of jobs each idle a fifth still leaves its devices idle at times, and a
  // third partner fills them. Over 20 simulator seeds, counting jobs/h only while every policy has
  // jobs waiting (docs/simulator.md, findings 15 and 16), two per device at 1.6 → three at 2.4 went
  // 1.496 → 1.572× exclusive FIFO (synthetic) and 1.355 → 1.422× (Philly), the least-served tenant
  // 0.923 → 0.939 and 0.922 → 0.979 (worst 0.822 → 0.859, 0.641 → 0.891), with switches 2.0 → 2.9%
  // and 1.4 → 1.8% of device time. On the physics check's regular steps a third job only adds
  // switches (f = 30%: 1.397 → 1.358× FIFO), and jobs with no idle, priced on the prior in their
  // first steps, now pair at a 2.8% loss. Groups stay together once the queue empties (not yet
  // spread out again), which cost one Philly window's mean completion 1.92 → 2.13 h.
  maxJobsPerDevice: 3,
  maxGroupLoad: 2.4,
  maxSwitchFraction: 0.1,
  timeSharing: true,
  fairShare: true,
  backfill: true,
  // Idle devices behind an aged job are lent, and taken back with a checkpoint when it can start:
  // the simulator measured 6.98 → 8.45 jobs/h over the makespan on the synthetic workload (temporal
  // plans, seed 1), and lending alone is 1.12× Kueue-like while saturated (docs/simulator.md).
  lendReservedDevices: true,
  // Off: over 5 simulator seeds it raised the least-served tenant from 0.848 to 0.868 (synthetic)
  // and 0.839 to 0.906 (Philly) with jobs/h within 0.8%, but borrowers scan past the protected
  // groups, and a round of bench:scheduler's 10,000 jobs half busy took 1.6–1.7× as long; one
  // Philly window's preemption notices went 42 → 258 (docs/simulator.md).
  protectOwnerDevices: false,
  preemption: true,
  compaction: true,
  // On: as many victims, fewer devices stopped (a QA pass saw a 1-device job take a 2-device job's
  // run). Over 20 simulator seeds it moved the synthetic workload's figures by little (1.562 →
  // 1.564× FIFO, 78.6 → 77.2 notices a seed, mean completion ÷ the better baseline 0.869 → 0.867,
  // worst least-served tenant 0.921 → 0.903) and Philly's not at all (docs/scheduler.md).
  smallerVictims: true,
  // On: over 20 simulator seeds (1–10 and 11–20) it raised the synthetic workload's jobs/h while
  // saturated 1.365 → 1.377× and 1.306 → 1.321× FIFO and its least-served tenant 0.862 → 0.877 and
  // 0.869 → 0.878, Philly's figures within ±0.007, at 5–16 more preemption notices a window (moves
  // that lose a restart). It was off while aged jobs took lent devices back and forth (69.6 notices
  // a Philly window); finding 12 removed that (docs/simulator.md).
  compactIntoGroups: true,
  // On, after 15 minutes' wait, for tenants under 0.8 of their entitlement: over 20 simulator seeds
  // (1–10 / 11–20) it raised the least-served tenant from 0.861 / 0.867 to 0.913 / 0.901 (synthetic)
  // and from 0.896 / 0.950 to 0.954 / 0.955 (Philly), jobs/h within ±0.01×, at about twice the
  // preemption notices on the synthetic workload (41 → 85 a seed) and mean completion ÷ the better
  // baseline 0.750 → 0.834 (docs/simulator.md, finding 13).
  reclaimCompactionAfterSeconds: 900,
  // Off: over 20 simulator seeds it shortened the p95 completion (÷ the better baseline 0.775 →
  // 0.754 synthetic, 0.912 → 0.864 Philly) but cost throughput and fairness (1.572 → 1.560× and
  // 1.422 → 1.409× FIFO while saturated; Philly's worst least-served tenant 0.891 → 0.798) at a
  // third more notices (docs/simulator.md, finding 17).
  spreadWhenIdle: false,
  minRunSeconds: 60,
  preemptGraceSeconds: 30,
  agingBoundSeconds: 3600,
  usageHistoryWeight: 0.5,
  crashBackoffSeconds: 5,
  replanning: true,
  // A moved job waits for a round (1 s) and starts again from its checkpoint; bench:coldstart
  // measured placed → first step at 36 ms p50 with the spare runner, so 2 s is on the safe side.
  restartSeconds: 2,
};

/** Whole devices per job, strict arrival order, nothing preempted: a Slurm-like FIFO. */
export const exclusiveFifoPolicy: Policy = {
  ...defaultPolicy,
  timeSharing: false,
  fairShare: false,
  backfill: false,
  lendReservedDevices: false,
  preemption: false,
  compaction: false,
  reclaimCompactionAfterSeconds: null,
};

/** Quotas, weighted fair share, backfill and reclaim, but whole devices per job: Kueue-like. */
export const kueueLikePolicy: Policy = {
  ...defaultPolicy,
  timeSharing: false,
  // Kueue's victims as its order gives them (its candidates: priority, then most recently admitted).
  smallerVictims: false,
  spreadWhenIdle: false,
  lendReservedDevices: false,
  compaction: false,
  reclaimCompactionAfterSeconds: null,
};
