/**
 * Choosing victims for a queued job that fits nowhere. Allowed victims (each past its minimum run
 * time, none already under notice):
 *   priority — a lower-priority job of the same tenant;
 *   reclaim  — a job of a borrowing tenant, when the preemptor's tenant is not borrowing after
 *              admission and its share after admission ≤ the victim tenant's share after the victim
 *              leaves (Kueue's LessThanOrEqualToFinalShare: two tenants cannot take turns
 *              preempting each other, since each preemption moves the shares towards each other);
 *   aging    — for a job past the aging bound, a job of no higher priority under the same share rule;
 *              and, with `lendReservedDevices`, any job of no higher priority that was placed on
 *              loan: queued after the aged job and placed while it was already waiting past the bound.
 * On each node victims are taken highest-share tenant first, then lowest priority, then most
 * recently placed, until the job fits; the node that needs the fewest victims wins. Jobs already
 * under notice count as gone: if they make room, nobody new is preempted.
 */
import type { PoolModel } from './cluster.js';
import type { FairShare } from './fair-share.js';
import type { JobPlan, Policy, PreemptDecision, QueuedJob, RunningJob } from './types.js';

export interface VictimContext {
  model: PoolModel;
  fair: FairShare;
  policy: Policy;
  now: number;
  running: ReadonlyMap<string, RunningJob>;
  /** Jobs under preemption notice (from earlier rounds or this one). */
  leaving: Set<string>;
  /** Leaving jobs whose devices a job earlier in this round's order already counts on. */
  claimed: Set<string>;
  /** Each running job's part of the pool's devices and memory (for the share rules). */
  footprint: ReadonlyMap<string, { devices: number; memory: number }>;
}

export function findVictims(
  ctx: VictimContext,
  job: QueuedJob,
  plan: JobPlan,
  aged: boolean,
): { victims: PreemptDecision[]; waitsForLeaving: boolean; nodeId: string; devices: number[] } | null {
  const { model, fair, policy, now } = ctx;
  const need = plan.devicesMin;
  const preemptorShare = fair.share(job.tenantId, need, need * plan.deviceBytes);
  const preemptorBorrows = fair.borrowing(job.tenantId, need, need * plan.deviceBytes);
  const agedAt = job.queuedAt + policy.agingBoundSeconds * 1000;
  const onLoan = (v: RunningJob) => v.queuedAt > job.queuedAt && v.placedAt >= agedAt;
  const reasonFor = (v: RunningJob): PreemptDecision['reason'] | null => {
    if (ctx.leaving.has(v.id) || now - v.placedAt < policy.minRunSeconds * 1000) return null;
    if (aged && policy.lendReservedDevices && v.priority <= job.priority && onLoan(v)) return 'aging';
    if (v.tenantId === job.tenantId) return v.priority < job.priority ? 'priority' : null;
    if (!policy.fairShare) return null;
    const f = ctx.footprint.get(v.id) ?? { devices: 0, memory: 0 };
    const finalShareOk = preemptorShare <= fair.share(v.tenantId, -f.devices, -f.memory) + 1e-12;
    if (!finalShareOk) return null;
    if (!preemptorBorrows && fair.borrowing(v.tenantId)) return 'reclaim';
    if (aged && v.priority <= job.priority) return 'aging';
    return null;
  };

  let best: { nodeId: string; devices: number[]; victims: PreemptDecision[]; claims: string[] } | null = null;
  for (const nodeId of model.slots.keys()) {
    const exclude = new Set<string>();
    const onNode = new Map<string, RunningJob>();
    const leavingHere: string[] = [];
    for (const s of model.slots.get(nodeId)!)
      for (const o of s.occupants) {
        if (ctx.leaving.has(o.jobId)) {
          // Held devices are a job's that comes back to them (pool-round.ts): not free to claim.
          if (!s.held && !ctx.claimed.has(o.jobId) && !leavingHere.includes(o.jobId))
            leavingHere.push(o.jobId);
        } else if (!onNode.has(o.jobId)) {
          const r = ctx.running.get(o.jobId);
          if (r) onNode.set(o.jobId, r);
        }
      }
    // Devices already being freed go to the first job in order that they fit: it claims just
    // as many leaving jobs as it needs, and nobody new is preempted for it.
    for (const id of leavingHere) {
      exclude.add(id);
      const fit = model.fitOnNode(nodeId, plan, need, exclude);
      if (fit) {
        for (const e of exclude) ctx.claimed.add(e);
        return { victims: [], waitsForLeaving: true, nodeId, devices: fit.devices };
      }
    }
    const candidates = [...onNode.values()]
      .map((v) => ({ v, reason: reasonFor(v) }))
      .filter((c): c is { v: RunningJob; reason: PreemptDecision['reason'] } => c.reason !== null)
      .sort(
        (a, b) =>
          fair.share(b.v.tenantId) - fair.share(a.v.tenantId) ||
          a.v.priority - b.v.priority ||
          b.v.placedAt - a.v.placedAt ||
          (a.v.id < b.v.id ? -1 : 1),
      );
    const chosen: PreemptDecision[] = [];
    for (const c of candidates) {
      if (best && chosen.length + 1 >= best.victims.length) break;
      exclude.add(c.v.id);
      chosen.push({ jobId: c.v.id, tenantId: c.v.tenantId, reason: c.reason, forJobId: job.id });
      const fit = model.fitOnNode(nodeId, plan, need, exclude);
      if (fit) {
        best = { nodeId, devices: fit.devices, victims: chosen, claims: [...exclude] };
        break;
      }
    }
  }
  if (!best) return null;
  for (const id of best.claims) ctx.claimed.add(id);
  return { victims: best.victims, waitsForLeaving: false, nodeId: best.nodeId, devices: best.devices };
}
