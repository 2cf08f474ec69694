/**
 * Compaction: a job that fits on no node while the pool has enough free devices, only spread over
 * several nodes, gets room made on one node by moving jobs there to free devices elsewhere. A moved
 * job is preempted with notice (reason `compact`), checkpoints, and starts again from its checkpoint
 * on the devices kept for it; it loses a restart, not its place, so a job of any tenant may be
 * moved (of no higher priority than the job, past its minimum run time). Nothing is moved unless
 * every job to move has free devices on another node, and the node needing the fewest devices
 * moved wins.
 *
 * With `compactIntoGroups` a moved job may also join a time-share group of its width on another
 * node (one whose load admits it), so the room need not be free anywhere yet: the pool's free
 * devices plus the idle time of its running jobs make it. On by default since finding 12 (docs/simulator.md).
 *
 * Checkpointing makes this cheap here where a Kubernetes descheduler or Slurm would lose the work:
 * without it a wide job on the Philly replay waited 2.5 h at none of its entitlement, part of that
 * time as the only job queued (docs/simulator.md, finding 6).
 */
import type { PoolModel, Slot } from './cluster.js';
import type { JobPlan, NodeDevices, Policy, QueuedJob, RunningJob } from './types.js';
import { mayNotice } from './min-run.js';

export interface CompactionMove {
  jobId: string;
  tenantId: string;
  to: NodeDevices;
}

export interface Compaction {
  nodeId: string;
  devices: number[];
  moves: CompactionMove[];
}

/**
 * The cheapest compaction that makes room for `plan`, or null. On success the model already holds
 * the job on its devices and each moved job on its new ones, so nothing later in the round takes them.
 */
export function findCompaction(
  model: PoolModel,
  plan: JobPlan,
  policy: Policy,
  now: number,
  running: ReadonlyMap<string, RunningJob>,
  leaving: ReadonlySet<string>,
  job: QueuedJob,
): Compaction | null {
  const need = plan.devicesMin;
  let free = 0;
  for (const slots of model.slots.values())
    for (const s of slots) if (s.occupants.length === 0 && !s.held) free++;
  const intoGroups = policy.compactIntoGroups && policy.timeSharing;
  if (free < need && !intoGroups) return null;

  let best: { nodeId: string; devices: number[]; moves: CompactionMove[]; moved: number } | null = null;
  for (const [nodeId, slots] of model.slots) {
    if (slots.length < need) continue;
    const freeHere = slots.filter((s) => s.occupants.length === 0 && !s.held).length;
    // Devices to move at least: what this node lacks. No better than the best so far: skip.
    if (best && need - freeHere >= best.moved) continue;
    // Only running jobs past their minimum run time, none under notice, of no higher priority move;
    // the rest stay (a job placed this round, one leaving, one held for a job coming back).
    const onNode = new Map<string, RunningJob>();
    for (const s of slots)
      for (const o of s.occupants) {
        const r = running.get(o.jobId);
        // Where it runs: the best move so far also holds its jobs where they would go.
        if (
          r &&
          r.nodeId === nodeId &&
          !leaving.has(r.id) &&
          mayNotice(r, policy, now) &&
          r.priority <= job.priority
        )
          onNode.set(r.id, r);
      }
    // Smallest jobs first: fewest devices moved for the room made.
    const candidates = [...onNode.values()].sort(
      (a, b) => a.devices.length - b.devices.length || (a.id < b.id ? -1 : 1),
    );
    const exclude = new Set<string>();
    let fit: { devices: number[] } | null = null;
    for (const c of candidates) {
      exclude.add(c.id);
      fit = model.fitOnNode(nodeId, plan, need, exclude);
      if (fit) break;
    }
    if (!fit) continue;
    const moved = [...exclude].reduce((n, id) => n + running.get(id)!.devices.length, 0);
    if (best && moved >= best.moved) continue;
    const moves = placeElsewhere(
      model,
      nodeId,
      [...exclude].map((id) => running.get(id)!),
      intoGroups,
    );
    if (!moves) continue;
    // Undo the trial placements; only the winner's are kept.
    if (best) for (const m of best.moves) model.remove(m.to.nodeId, m.jobId);
    best = { nodeId, devices: fit.devices, moves, moved };
  }
  if (!best) return null;
  model.add(best.nodeId, best.devices, { jobId: job.id, tenantId: job.tenantId, plan });
  return { nodeId: best.nodeId, devices: best.devices, moves: best.moves };
}

/**
 * Free devices on other nodes for each job, best fit (the node with the fewest free devices that
 * takes it, so whole nodes stay whole). Kept in the model; all undone and null if one has nowhere.
 */
function placeElsewhere(
  model: PoolModel,
  from: string,
  jobs: RunningJob[],
  intoGroups: boolean,
): CompactionMove[] | null {
  const moves: CompactionMove[] = [];
  for (const r of [...jobs].sort((a, b) => b.devices.length - a.devices.length)) {
    const count = r.devices.length;
    let to: NodeDevices | null = bestFreeDevices(model, r.plan, count, { skip: from });
    if (!to && intoGroups) to = model.cheapestJoin(r.plan, count, from);
    if (!to) {
      for (const m of moves) model.remove(m.to.nodeId, m.jobId);
      return null;
    }
    model.add(to.nodeId, to.devices, { jobId: r.id, tenantId: r.tenantId, plan: r.plan });
    moves.push({ jobId: r.id, tenantId: r.tenantId, to: { nodeId: to.nodeId, devices: to.devices } });
  }
  return moves;
}

/**
 * `count` free devices on one node for a job with `plan`, best fit: the node with the fewest free
 * devices that takes it, so whole nodes stay whole. `skip` is a node not to use; `alreadyOn`, a node
 * whose host memory already holds the job's offloaded state; `keepWholeNodes` leaves a node with
 * every device free to a job that takes all of it.
 */
export function bestFreeDevices(
  model: PoolModel,
  plan: JobPlan,
  count: number,
  opts: { skip?: string; alreadyOn?: string; keepWholeNodes?: boolean } = {},
): NodeDevices | null {
  // A full pool (the usual case when a round compacts) has no node to look at.
  if (model.mostFree() < count) return null;
  let best: { nodeId: string; slots: Slot[]; free: number } | null = null;
  for (const [nodeId, slots] of model.slots) {
    if (nodeId === opts.skip) continue;
    const node = slots[0]?.node;
    const host = nodeId === opts.alreadyOn ? 0 : plan.hostBytes;
    if (!node || model.hostUsedOn(nodeId) + host > node.hostMemoryBytes) continue;
    let free = 0;
    for (const s of slots)
      if (s.occupants.length === 0 && !s.held && s.memoryBytes >= plan.deviceBytes) free++;
    if (opts.keepWholeNodes && free === slots.length && count < slots.length) continue;
    if (free < count || (best && free >= best.free)) continue;
    best = { nodeId, slots, free };
    // Nothing beats a node with exactly the devices wanted.
    if (free === count) break;
  }
  if (!best) return null;
  const devices: number[] = [];
  for (const s of best.slots)
    if (devices.length < count && s.occupants.length === 0 && !s.held && s.memoryBytes >= plan.deviceBytes)
      devices.push(s.index);
  return { nodeId: best.nodeId, devices };
}
