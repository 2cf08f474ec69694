/**
 * A job its tenant's concurrent-device quota holds back, while the tenant runs jobs of lower
 * priority: the quota is checked before any victim search, so an urgent job waited on `quota`,
 * without an estimate, for its own tenant's low-priority jobs to end. Kueue preempts lower-priority
 * workloads within a ClusterQueue in exactly this case. Here its tenant's lower-priority jobs in the
 * pool get a `priority` notice: the fewest that bring the tenant under its quota with the job and
 * leave devices the job fits on; none when no choice does both, so nobody restarts for nothing.
 */
import type { PoolModel } from './cluster.js';
import type { JobPlan, Policy, PreemptDecision, QueuedJob, RunningJob } from './types.js';
import { mayNotice } from './min-run.js';

export interface QuotaPreemption {
  victims: PreemptDecision[];
  /** Where the job fits once they are gone. */
  nodeId: string;
  devices: number[];
}

/**
 * `over`: devices the tenant holds beyond its quota with the job placed. `own`: the tenant's running
 * jobs in the pool. Jobs already under notice count as gone (a notice sent for this job in an
 * earlier round covers it: none is sent again).
 */
export function quotaPriorityPreemption(
  model: PoolModel,
  job: QueuedJob,
  plan: JobPlan,
  over: number,
  own: readonly RunningJob[],
  leaving: ReadonlySet<string>,
  policy: Policy,
  now: number,
): QuotaPreemption | null {
  let left = over;
  for (const v of own) if (leaving.has(v.id)) left -= v.devices.length;
  if (left <= 0) return null;
  // Lowest priority first, then the most recently placed (it loses the least), as `priority` victims.
  const candidates = own
    .filter((v) => !leaving.has(v.id) && v.priority < job.priority && mayNotice(v, policy, now))
    .sort((a, b) => a.priority - b.priority || b.placedAt - a.placedAt);
  const fitWithout = (chosen: readonly RunningJob[]) => {
    const exclude = new Set(chosen.map((v) => v.id));
    let best: { nodeId: string; devices: number[]; cost: number } | null = null;
    for (const nodeId of model.slots.keys()) {
      const fit = model.fitOnNode(nodeId, plan, plan.devicesMin, exclude);
      if (fit && (!best || fit.cost < best.cost)) best = { nodeId, devices: fit.devices, cost: fit.cost };
    }
    return best;
  };
  const freed = (chosen: readonly RunningJob[]) => chosen.reduce((n, v) => n + v.devices.length, 0);
  const chosen: RunningJob[] = [];
  let fit: ReturnType<typeof fitWithout> = null;
  for (const v of candidates) {
    chosen.push(v);
    if (freed(chosen) >= left && (fit = fitWithout(chosen))) break;
  }
  if (!fit) return null;
  // Each victim dropped again, the last taken first, if the job still gets under its quota and fits.
  for (let i = chosen.length - 1; i >= 0; i--) {
    const without = chosen.filter((_, j) => j !== i);
    const still = freed(without) >= left ? fitWithout(without) : null;
    if (still) {
      chosen.splice(i, 1);
      fit = still;
    }
  }
  return {
    victims: chosen.map((v) => ({ jobId: v.id, tenantId: v.tenantId, reason: 'priority', forJobId: job.id })),
    nodeId: fit.nodeId,
    devices: fit.devices,
  };
}
