/**
 * Growth (`maxDevices`) counts against the tenant's concurrent-device quota, so a tenant whose job
 * grew into idle devices up to its quota held its own next job back with `quota` until the grown
 * job ended (a job grown from 1 to 4 devices under a quota of 4: the tenant's 1-device job waited
 * for the whole run, with no estimate). Growth delays nobody: a job held back by its quota only
 * because its tenant's jobs grew gets that growth back, as a `shrink` notice to enough of them.
 */
import { grownBy } from './preempt.js';
import type { Policy, PreemptDecision, QueuedJob, RunningJob } from './types.js';
import { mayNotice } from './min-run.js';

/**
 * The notices that bring the tenant `over` devices under its quota, from its jobs in `grown` (each
 * gives back what it grew into: it returns at its minimum). None when growth already under notice
 * covers it, or when what the others grew into would not be enough: nobody restarts for nothing.
 */
export function quotaShrinks(
  job: QueuedJob,
  over: number,
  grown: readonly RunningJob[],
  leaving: ReadonlySet<string>,
  policy: Policy,
  now: number,
): PreemptDecision[] {
  let left = over;
  for (const v of grown) if (leaving.has(v.id)) left -= grownBy(v);
  if (left <= 0) return [];
  // The most grown first (fewest restarts), then the most recently placed.
  const candidates = grown
    .filter((v) => !leaving.has(v.id) && mayNotice(v, policy, now))
    .sort((a, b) => grownBy(b) - grownBy(a) || b.placedAt - a.placedAt);
  const out: PreemptDecision[] = [];
  for (const v of candidates) {
    if (left <= 0) break;
    out.push({ jobId: v.id, tenantId: v.tenantId, reason: 'shrink', forJobId: job.id });
    left -= grownBy(v);
  }
  return left <= 0 ? out : [];
}
