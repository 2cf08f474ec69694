/**
 * Compaction with reclaimed destinations: a job of a tenant holding well under its entitlement that
 * fits nowhere, and for which no node can be cleared by preemption alone (some jobs there may not be
 * preempted for it: a tenant within its entitlement, its own tenant's), gets a node cleared by
 * preempting the jobs there that the share rules allow and moving the others (reason `compact`,
 * they lose a restart, not their place) onto devices freed elsewhere by preempting more such jobs.
 * Every preemption keeps Kueue's LessThanOrEqualToFinalShare, so no tenant can take the devices
 * back the other way. The node with the fewest notices wins.
 *
 * The case it is for (docs/simulator.md, "Fairness is not met"): on a 4-node pool an 8-device job of
 * a tenant at half its entitlement waits for hours while borrowers hold devices on every node,
 * beside jobs of tenants at their entitlement.
 */
import type { CompactionMove } from './compact.js';
import type { FairShare } from './fair-share.js';
import {
  claimableBy,
  leavingJobsOn,
  SCAN_AFTER_FIT,
  stayingJobsOn,
  type VictimContext,
  type VictimRules,
} from './preempt.js';
import type { JobPlan, Policy, PreemptDecision, QueuedJob, RunningJob } from './types.js';
import { mayNotice } from './min-run.js';

export interface ReclaimingCompaction {
  nodeId: string;
  devices: number[];
  victims: PreemptDecision[];
  moves: CompactionMove[];
}

/** Whether a job that fits nowhere may have a node cleared this way (policy, its tenant's shortfall, its wait). */
export function reclaimCompactionApplies(
  job: QueuedJob,
  fair: FairShare,
  policy: Policy,
  now: number,
): boolean {
  const after = policy.reclaimCompactionAfterSeconds;
  return (
    after !== null &&
    policy.compaction &&
    policy.fairShare &&
    now - job.queuedAt >= after * 1000 &&
    fair.starved(job.tenantId)
  );
}

export function findReclaimingCompaction(
  ctx: VictimContext,
  job: QueuedJob,
  plan: JobPlan,
  rules: Pick<VictimRules, 'reasonOf' | 'byShare'>,
): ReclaimingCompaction | null {
  const { reasonOf, byShare } = rules;
  const { model, policy, now } = ctx;
  const need = plan.devicesMin;

  let best: (ReclaimingCompaction & { notices: number }) | null = null;
  let sinceBest = 0;
  for (const [nodeId, slots] of model.slots) {
    if (best && ++sinceBest > SCAN_AFTER_FIT) break;
    if (slots.length < need) continue;
    const exclude = new Set<string>(leavingJobsOn(ctx, slots));
    const here = stayingJobsOn(ctx, slots);
    const victims = here.filter((v) => reasonOf(v) !== null).sort(byShare);
    const movable = here
      .filter((v) => reasonOf(v) === null && mayNotice(v, policy, now) && v.priority <= job.priority)
      .sort((a, b) => a.devices.length - b.devices.length || (a.id < b.id ? -1 : 1));
    for (const v of victims) exclude.add(v.id);
    const moved: RunningJob[] = [];
    let fit = model.fitOnNode(nodeId, plan, need, exclude);
    for (const m of movable) {
      if (fit) break;
      exclude.add(m.id);
      moved.push(m);
      fit = model.fitOnNode(nodeId, plan, need, exclude);
    }
    if (!fit) continue;
    // Only the victims the fit needs: drop each one the job still fits without.
    const needed = victims.filter((v) => {
      exclude.delete(v.id);
      if (model.fitOnNode(nodeId, plan, need, exclude)) return false;
      exclude.add(v.id);
      return true;
    });
    if (best && needed.length + moved.length >= best.notices) continue;
    const taken = new Set(needed.map((v) => v.id));
    const placed = placeMoved(ctx, nodeId, moved, reasonOf, byShare, taken);
    if (!placed) continue;
    const notices = needed.length + moved.length + placed.victims.length;
    if (best && notices >= best.notices) {
      for (const m of placed.moves) model.remove(m.to.nodeId, m.jobId);
      continue;
    }
    if (best) for (const m of best.moves) model.remove(m.to.nodeId, m.jobId);
    const decision = (v: RunningJob): PreemptDecision => ({
      jobId: v.id,
      tenantId: v.tenantId,
      reason: reasonOf(v)!,
      forJobId: job.id,
    });
    sinceBest = 0;
    best = {
      nodeId,
      devices: fit!.devices,
      victims: [...needed.map(decision), ...placed.victims.map(decision)],
      moves: placed.moves,
      notices,
    };
  }
  if (!best) return null;
  model.add(best.nodeId, best.devices, { jobId: job.id, tenantId: job.tenantId, plan });
  return { nodeId: best.nodeId, devices: best.devices, victims: best.victims, moves: best.moves };
}

/**
 * Devices on other nodes for each moved job: free ones (best fit), else ones the fewest preemptable
 * jobs there free. Kept in the model; all undone and null if one has nowhere to go.
 */
function placeMoved(
  ctx: VictimContext,
  from: string,
  jobs: RunningJob[],
  reasonOf: (v: RunningJob) => PreemptDecision['reason'] | null,
  byShare: (a: RunningJob, b: RunningJob) => number,
  taken: Set<string>,
): { moves: CompactionMove[]; victims: RunningJob[] } | null {
  const { model } = ctx;
  const moves: CompactionMove[] = [];
  const victims: RunningJob[] = [];
  const undo = () => {
    for (const m of moves) model.remove(m.to.nodeId, m.jobId);
    return null;
  };
  for (const r of [...jobs].sort((a, b) => b.devices.length - a.devices.length)) {
    const count = r.devices.length;
    let to: { nodeId: string; devices: number[]; victims: RunningJob[] } | null = null;
    let sinceTo = 0;
    for (const [nodeId, slots] of model.slots) {
      if (to && ++sinceTo > SCAN_AFTER_FIT) break;
      if (nodeId === from) continue;
      const node = slots[0]?.node;
      if (!node || model.hostUsedOn(nodeId) + r.plan.hostBytes > node.hostMemoryBytes) continue;
      const exclude = new Set<string>();
      for (const s of slots)
        for (const o of s.occupants) if (claimableBy(ctx, s, o.jobId)) exclude.add(o.jobId);
      let fit = model.fitOnNode(nodeId, r.plan, count, exclude);
      const chosen: RunningJob[] = [];
      if (!fit) {
        const candidates = stayingJobsOn(ctx, slots).filter((v) => !taken.has(v.id) && reasonOf(v) !== null);
        for (const v of candidates.sort(byShare)) {
          if (to && chosen.length + 1 >= to.victims.length) break;
          exclude.add(v.id);
          chosen.push(v);
          fit = model.fitOnNode(nodeId, r.plan, count, exclude);
          if (fit) break;
        }
      }
      if (!fit || (to && chosen.length >= to.victims.length)) continue;
      to = { nodeId, devices: fit.devices, victims: chosen };
      sinceTo = 0;
      if (chosen.length === 0) break;
    }
    if (!to) return undo();
    model.add(to.nodeId, to.devices, { jobId: r.id, tenantId: r.tenantId, plan: r.plan });
    moves.push({ jobId: r.id, tenantId: r.tenantId, to: { nodeId: to.nodeId, devices: to.devices } });
    for (const v of to.victims) {
      taken.add(v.id);
      victims.push(v);
    }
  }
  return { moves, victims };
}
