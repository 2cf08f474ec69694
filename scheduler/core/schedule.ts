/**
 * The round: `schedule(snapshot, policy, now) → decisions`, pure (no I/O, the clock injected).
 * Kueue's cycle, step by step:
 *   1. withdraw the notices whose reason went (withdraw.ts); take back the devices of jobs whose
 *      preemption grace ran out; give a notice to each job its tenant paused (`pause`) and to each
 *      job on a node an admin cordoned with eviction (`drain`);
 *   2. per pool (pools never wait on each other): snapshot the pool's devices and shares, nominate
 *      each queued job's plan, admit in tournament order (placing, time-sharing, compacting or
 *      preempting), and requeue the rest with their reason, position and estimated start
 *      (pool-round.ts);
 *   3. re-plan running jobs whose profiles now favour another plan (planner/replan.ts): a move is
 *      a preemption of the job itself, which gets its devices back first in the next round;
 *   4. record, once per placement, the step time predicted for a running job from its first 5
 *      profiled steps there (`job.plan_fitted`), re-planning on or off.
 */
import { returnsTo, schedulePool, type PoolInput } from './pool-round.js';
import { groupAdmits } from './cluster.js';
import type { Decisions, JobPlan, Policy, PreemptDecision, RunningJob, Snapshot } from './types.js';
import { considerFitted, considerReplan } from '../planner/replan.js';
import { withdrawal, withoutNotice } from './withdraw.js';

function replanRunning(pools: Map<string, PoolInput>, policy: Policy, now: number, out: Decisions): void {
  const touched = new Set([...out.preempt.map((p) => p.jobId), ...out.takeBack.map((t) => t.jobId)]);
  for (const pool of pools.values()) {
    const fits = planFitsDevices(pool, policy, out, touched);
    // A job moved in place leaves its devices and comes back to them: not on a cordoned node, where
    // nothing comes back (it would be an eviction nobody asked for).
    const cordoned = new Set(pool.nodes.filter((n) => n.cordoned).map((n) => n.id));
    for (const job of pool.running) {
      if (!job.replan || touched.has(job.id) || cordoned.has(job.nodeId)) continue;
      const d = considerReplan(job, job.replan, policy, now, (plan) => fits(job, plan));
      if (!d) continue;
      out.replan.push(d);
      if (d.kind === 'move')
        out.preempt.push({ jobId: job.id, tenantId: job.tenantId, reason: 'replan', forJobId: job.id });
    }
  }
}

/**
 * Whether a running job could take its own devices again with another plan, beside the jobs that
 * stay on them (running and not leaving, or placed this round): the time-share group's bounds
 * (`groupAdmits`, as `PoolModel.canJoin` keeps them). A move in place comes back only where it fits (pool-round.ts
 * `returnFit`); one that does not loses its devices and its place. In the simulator 2 of 33 moves
 * did so, one of them waiting 3 hours to start again.
 */
function planFitsDevices(
  pool: PoolInput,
  policy: Policy,
  out: Decisions,
  leaving: ReadonlySet<string>,
): (job: RunningJob, plan: JobPlan) => boolean {
  // Built on the first question: most rounds re-plan nobody.
  let index: { on: Map<string, { id: string; plan: JobPlan }[]>; memory: Map<string, number> } | null = null;
  const build = () => {
    const on = new Map<string, { id: string; plan: JobPlan }[]>();
    const add = (nodeId: string, devices: readonly number[], id: string, plan: JobPlan) => {
      for (const d of devices) {
        const k = `${nodeId}/${d}`;
        const list = on.get(k);
        if (list) list.push({ id, plan });
        else on.set(k, [{ id, plan }]);
      }
    };
    for (const r of pool.running)
      if (r.preemptRequestedAt === null && !leaving.has(r.id)) add(r.nodeId, r.devices, r.id, r.plan);
    for (const p of out.place) add(p.nodeId, p.devices, p.jobId, p.plan);
    const memory = new Map<string, number>();
    for (const n of pool.nodes) for (const d of n.devices) memory.set(`${n.id}/${d.index}`, d.memoryBytes);
    return { on, memory };
  };
  return (job, plan) => {
    const { on, memory } = (index ??= build());
    return job.devices.every((d) => {
      const k = `${job.nodeId}/${d}`;
      if (plan.deviceBytes > (memory.get(k) ?? 0)) return false;
      const others = (on.get(k) ?? []).filter((o) => o.id !== job.id).map((o) => o.plan);
      return groupAdmits(policy, others, plan);
    });
  };
}

export function schedule(snapshot: Snapshot, policy: Policy, now: number): Decisions {
  const out: Decisions = {
    place: [],
    preempt: [],
    withdraw: [],
    takeBack: [],
    queue: [],
    shares: [],
    replan: [],
  };
  const tenants = new Map(snapshot.tenants.map((t) => [t.id, t]));
  const activeDevices = new Map(snapshot.tenants.map((t) => [t.id, t.activeDevices]));

  const graceMs = policy.preemptGraceSeconds * 1000;
  // A job its tenant paused, or one on a node an admin cordoned with eviction (Kubernetes' drain),
  // leaves now, minimum run time or not, and nobody claims its devices (a cordoned node's devices
  // take nothing new): from here on the round sees it as any job under notice.
  const evicting = new Set<string>();
  for (const n of snapshot.nodes) if (n.cordoned && n.evict) evicting.add(n.id);
  const noticedNow = new Set<string>();
  const standing = {
    waiting: new Set(snapshot.queued.map((q) => q.id)),
    running: new Set(snapshot.running.map((r) => r.id)),
    nodes: new Map(snapshot.nodes.map((n) => [n.id, n])),
  };
  const running = snapshot.running.map((noticed): RunningJob => {
    // Withdrawn before its grace is looked at: a job whose notice lost its reason keeps its devices.
    const because = withdrawal(noticed, standing);
    if (because)
      out.withdraw.push({
        jobId: noticed.id,
        tenantId: noticed.tenantId,
        reason: noticed.preemptReason!,
        because,
      });
    const r = because ? withoutNotice(noticed) : noticed;
    if (r.preemptRequestedAt !== null) return r;
    const reason: PreemptDecision['reason'] | null = r.paused
      ? 'pause'
      : evicting.size && evicting.has(r.nodeId)
        ? 'drain'
        : null;
    if (reason === null) return r;
    out.preempt.push({ jobId: r.id, tenantId: r.tenantId, reason, forJobId: r.id });
    noticedNow.add(r.id);
    return { ...r, preemptRequestedAt: now, preemptReason: reason, preemptFor: null };
  });
  // A notice given this round is not taken back in it, even with no grace at all: its row has no
  // notice yet, so the take-back would change nothing and its devices would read as free.
  const stillRunning = running.filter((r) => {
    if (r.preemptRequestedAt === null || noticedNow.has(r.id) || now - r.preemptRequestedAt < graceMs)
      return true;
    out.takeBack.push({ jobId: r.id, tenantId: r.tenantId });
    activeDevices.set(r.tenantId, Math.max(0, (activeDevices.get(r.tenantId) ?? 0) - r.devices.length));
    return false;
  });

  const pools = new Map<string, PoolInput>();
  const poolOf = (name: string) => {
    let p = pools.get(name);
    if (!p)
      pools.set(
        name,
        (p = { pool: name, nodes: [], running: [], queued: [], preemptors: new Set(), held: [] }),
      );
    return p;
  };
  for (const n of snapshot.nodes) poolOf(n.pool).nodes.push(n);
  for (const r of stillRunning) poolOf(r.pool).running.push(r);
  const takenBack = new Set(out.takeBack.map((t) => t.jobId));
  for (const r of running) {
    if (r.preemptRequestedAt === null) continue;
    // Devices being freed are their preemptor's: nobody ahead of it in the order takes them. Without
    // this, a reclaim from a tenant just over its entitlement put that tenant under it, its aged jobs
    // were promoted onto the freed devices, and the preemptor reclaimed again: 1,046 notices on one
    // Philly window (docs/simulator.md, finding 12).
    if (r.preemptReason !== 'replan' && r.preemptFor) poolOf(r.pool).preemptors.add(r.preemptFor);
    // Taken back this round, requeued after it: where it returns stays held until then.
    const back = returnsTo(r);
    if (back && takenBack.has(r.id)) poolOf(r.pool).held.push(back);
  }
  for (const q of snapshot.queued) {
    poolOf(q.pool).queued.push(q);
    // Moved by compaction and checkpointed before its notice ran out: the cleared node is still
    // its wide job's until that job is placed.
    if (q.returnTo && q.returnFor) poolOf(q.pool).preemptors.add(q.returnFor);
    // The same just after its victims left: a victim that checkpointed before its notice ran out
    // leaves between rounds, and the round that first sees its devices free gives them to the job
    // it left for (for a minimum run time after the requeue, which spans several rounds).
    if (q.preemptedFor && now - q.queuedAt < policy.minRunSeconds * 1000)
      poolOf(q.pool).preemptors.add(q.preemptedFor);
  }
  for (const name of [...pools.keys()].sort())
    schedulePool(pools.get(name)!, tenants, activeDevices, policy, now, out);
  if (policy.replanning) replanRunning(pools, policy, now, out);
  for (const r of stillRunning) {
    const fitted = r.replan ? considerFitted(r, r.replan) : null;
    if (fitted) out.replan.push(fitted);
  }
  return out;
}
