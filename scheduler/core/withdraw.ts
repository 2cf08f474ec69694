/**
 * Withdrawing a notice whose reason went before its job left: the tenant resumed a job it paused,
 * an admin uncordoned (or cordoned without eviction) the node a `drain` notice evicts from, or the
 * queued job a notice frees devices for (its claimant) is gone: cancelled, paused, failed. Left
 * out, the job checkpointed and stopped for nothing, and gave its devices to whoever came next.
 * A claimant placed elsewhere does not withdraw its notices: the devices they free were planned
 * for the queue behind it (a compaction's move, the next in line), and in the simulator, whose jobs
 * begin their checkpoint at the notice, withdrawing them then cost 2.4% of Timeshare's jobs/h on
 * the synthetic workload (seed 1: 1.507× → 1.464× Kueue-like, the planner 1.088× → 1.058×) by
 * sending compacted jobs back to the queue instead of to the devices reserved for them.
 *
 * What must stay true: a notice is withdrawn on facts no notice changes, never by judging the rule
 * that issued it again. A job under notice counts as gone in the round's shares (its devices are
 * its claimant's), so a reclaim judged again would find its victim's tenant under its entitlement
 * and withdraw, the next round would reclaim again, and two tenants would trade one notice every
 * round (Kueue's LessThanOrEqualToFinalShare holds only because a notice, once given, stands); nor
 * does the minimum run time help, since a job under notice has run it already. So a claimed notice
 * stands while its claimant waits, whatever the shares say now; `replan` and `spread` notices are
 * the job's own moves, weighed with their own hysteresis, and stand. A job whose notice is
 * withdrawn is a running job again in the same round, and any rule may give it a new notice.
 */
import type { NodeState, PreemptDecision, RunningJob, WithdrawDecision } from './types.js';

/** Notices given to free devices for a queued job (`forJobId`): they stand while it waits. */
const CLAIMED: ReadonlySet<PreemptDecision['reason']> = new Set([
  'priority',
  'reclaim',
  'aging',
  'shrink',
  'compact',
]);

export interface WithdrawContext {
  /** Jobs waiting in the queue now (paused ones are not: nobody frees devices for them). */
  waiting: ReadonlySet<string>;
  /** Jobs running now: a claimant placed elsewhere is not gone. */
  running: ReadonlySet<string>;
  /** Ready nodes, by id: a node missing here (draining, lost) tells nothing about its cordon. */
  nodes: ReadonlyMap<string, NodeState>;
}

/** Why the job's notice no longer stands, or null while it does (or there is none). */
export function withdrawal(job: RunningJob, ctx: WithdrawContext): WithdrawDecision['because'] | null {
  if (job.preemptRequestedAt === null) return null;
  const node = ctx.nodes.get(job.nodeId);
  // A pause or an eviction would give it a notice now, whatever the one it has was for.
  if (job.paused || (node?.cordoned && node.evict)) return null;
  const reason = job.preemptReason ?? null;
  if (reason === 'pause') return 'job_resumed';
  if (reason === 'drain') return node ? 'eviction_lifted' : null;
  const claimant = job.preemptFor;
  if (
    reason !== null &&
    CLAIMED.has(reason) &&
    claimant &&
    !ctx.waiting.has(claimant) &&
    !ctx.running.has(claimant)
  )
    return 'claimant_left';
  return null;
}

/** The job as it runs without its notice. */
export const withoutNotice = (job: RunningJob): RunningJob => ({
  ...job,
  preemptRequestedAt: null,
  preemptReason: null,
  preemptFor: null,
  returnTo: null,
});
