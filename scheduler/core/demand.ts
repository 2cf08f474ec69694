/**
 * The capacity signal an autoscaler reads (KEDA's metrics-api scaler through the API, or the
 * Prometheus gauges): per pool, after a round's decisions, the devices its work wants and the
 * devices standing idle. Pure, like the round it follows, and fed by the same snapshot.
 *
 * What must stay true:
 * - `wantedDevices` is 0 exactly when the pool has nothing queued that more devices would start and
 *   nothing running: the autoscaler may then take the pool to zero nodes;
 * - a pool with no nodes but queued work wants devices (its jobs wait with reason `capacity`), so a
 *   pool scaled to zero comes back when work arrives;
 * - a job waiting on its tenant's quota wants nothing: more nodes would not start it;
 * - devices held on a draining node still count as wanted: their jobs come back to the queue as the
 *   node drains, and their replacement is wanted before, not after, they arrive;
 * - a node an admin cordoned takes no work: its devices are not the pool's (`devices`, `idle`),
 *   and those its jobs hold are busy, as on a draining node.
 */
import { emptyCapacity, type PoolCapacity } from '../../common/capacity.js';
import type { Decisions, Snapshot } from './types.js';

/** One pool's signal (the fields are explained where it travels, common/capacity.ts). */
export type PoolDemand = PoolCapacity;

/**
 * Reasons a queued job waits that more capacity would not remove: more nodes like the pool's would
 * not hold an `unschedulable` job either.
 */
const NOT_CAPACITY = new Set(['quota', 'unschedulable']);

export function poolDemand(snapshot: Snapshot, decisions: Decisions): PoolDemand[] {
  const pools = new Map<string, PoolDemand & { held: Set<string>; heldOnReady: Set<string> }>();
  const of = (pool: string) => {
    let p = pools.get(pool);
    if (!p) pools.set(pool, (p = { ...emptyCapacity(pool), held: new Set(), heldOnReady: new Set() }));
    return p;
  };
  const ready = new Set<string>();
  for (const n of snapshot.nodes) {
    if (n.cordoned) continue;
    of(n.pool).devices += n.devices.length;
    ready.add(n.id);
  }
  const hold = (pool: string, nodeId: string, devices: readonly number[]) => {
    const p = of(pool);
    p.runningJobs++;
    for (const i of devices) {
      p.held.add(`${nodeId}/${i}`);
      if (ready.has(nodeId)) p.heldOnReady.add(`${nodeId}/${i}`);
    }
  };

  const takenBack = new Set(decisions.takeBack.map((t) => t.jobId));
  const want = (pool: string, devices: number | null) => {
    const p = of(pool);
    p.queuedJobs++;
    if (devices !== null) p.queuedDevices += devices;
  };
  for (const r of snapshot.running) {
    // Taken back this round: the job is queued again once the decisions commit (a paused one waits
    // for its tenant, wanting nothing).
    if (!takenBack.has(r.id)) hold(r.pool, r.nodeId, r.devices);
    else if (!r.paused) want(r.pool, r.plan.devicesMin);
  }
  const queued = new Map(snapshot.queued.map((q) => [q.id, q]));
  for (const p of decisions.place) {
    const q = queued.get(p.jobId);
    if (q) hold(q.pool, p.nodeId, p.devices);
  }
  for (const e of decisions.queue) {
    const q = queued.get(e.jobId);
    if (q) want(q.pool, NOT_CAPACITY.has(e.waitReason) ? null : q.devices);
  }

  return [...pools.values()]
    .sort((a, b) => (a.pool < b.pool ? -1 : a.pool > b.pool ? 1 : 0))
    .map(({ held, heldOnReady, ...p }) => ({
      ...p,
      busyDevices: held.size,
      idleDevices: Math.max(0, p.devices - heldOnReady.size),
      wantedDevices: held.size + p.queuedDevices,
    }));
}
