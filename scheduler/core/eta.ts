/**
 * Queue positions and estimated start times for one pool. The estimate replays the queue in order
 * on the pool's devices as whole devices: each device is free when the jobs on it now are predicted
 * to finish (their remaining steps × predicted step time; a job under preemption notice within its
 * grace period), and each queued job takes the devices that free up first for its predicted run.
 * Time-sharing can only start jobs sooner, so this errs late; a job wider than the pool gets null.
 */
import { FreeTimes } from './free-times.js';
import { remainingSeconds } from '../planner/plan-job.js';
import type { JobPlan, Policy, QueueEntryView, QueuedJob, WaitReason } from './types.js';

export interface Waiting {
  job: QueuedJob;
  plan: JobPlan;
  reason: WaitReason;
  /** Earliest time it may start regardless of capacity (crash back-off), or 0. */
  notBefore: number;
}

export function estimateQueue(
  pool: string,
  deviceFreeAt: number[],
  waiting: readonly Waiting[],
  now: number,
): QueueEntryView[] {
  const free = new FreeTimes();
  const byTime = new Map<number, number>();
  for (const t of deviceFreeAt) {
    const at = Math.max(now, t);
    byTime.set(at, (byTime.get(at) ?? 0) + 1);
  }
  for (const [at, n] of byTime) free.add(at, n);
  const views: QueueEntryView[] = [];
  const perTenant = new Map<string, number>();
  let position = 0;
  for (const w of waiting) {
    position++;
    const tenantPosition = (perTenant.get(w.job.tenantId) ?? 0) + 1;
    perTenant.set(w.job.tenantId, tenantPosition);
    const need = w.plan.devicesMin;
    let estimatedStartAt: number | null = null;
    if (need <= free.size && w.reason !== 'quota') {
      const start = Math.max(now, w.notBefore, free.take(need));
      const end = start + remainingSeconds(w.plan, w.job.workload.steps, w.job.stepsDone) * 1000;
      free.add(end, need);
      estimatedStartAt = Math.round(start);
    }
    views.push({ jobId: w.job.id, pool, position, tenantPosition, waitReason: w.reason, estimatedStartAt });
  }
  return views;
}

/** Back-off before a crash-looping job's next attempt. */
export function crashBackoffUntil(j: QueuedJob, policy: Policy): number {
  if (j.requeueReason !== 'crashed' || j.attempts < 1) return 0;
  const seconds = Math.min(300, policy.crashBackoffSeconds * 2 ** (j.attempts - 1));
  return j.queuedAt + seconds * 1000;
}
