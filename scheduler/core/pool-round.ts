/**
 * One pool's part of a round: build the pool's model and shares, walk the queue in admission order,
 * place what fits (free devices first, then time-share groups the cost rules admit), preempt for
 * what may preempt, say why the rest waits, let placed jobs grow into devices nobody waits for,
 * and estimate every waiting job's start.
 */
import { PoolModel, switchFraction } from './cluster.js';
import { crashBackoffUntil, estimateQueue, type JoinHost, type Waiting } from './eta.js';
import { FairShare } from './fair-share.js';
import { admissionOrder, isPromoted } from './order.js';
import { DEFAULT_PARTIAL_TAIL, planJob, remainingSeconds } from '../planner/plan-job.js';
import { poolPace } from './pace.js';
import { findCompaction, type CompactionMove } from './compact.js';
import { findSpreads } from './spread.js';
import { claimLeaving, findVictims, grownBy, movesElsewhere, victimRules } from './preempt.js';
import { quotaShrinks } from './quota-shrink.js';
import { quotaPriorityPreemption } from './quota-priority.js';
import { findReclaimingCompaction, reclaimCompactionApplies } from './reclaim-compact.js';
import { stageDeviceMap } from '../../common/node-protocol/placement.js';
import type {
  Decisions,
  JobPlan,
  NodeDevices,
  NodeState,
  PlaceDecision,
  PreemptDecision,
  Policy,
  QueuedJob,
  RunningJob,
  TenantState,
  WaitReason,
} from './types.js';

/**
 * Bounds the victim searches of one round (each scans the pool's running jobs). A preemption takes
 * its grace period to free anything and rounds run every second, so 8 a round is ample: the
 * simulator printed the same figures at 8 as at 16 on 5 seeds of both workloads, and a round of
 * bench:scheduler that places 4,000 jobs spent 40% of its time in 16 searches.
 */
const MAX_PREEMPTION_SEARCHES = 8;
/** Time-share groups compared per job before taking the cheapest. */
const SHARED_CANDIDATES = 4;
/** Nodes a borrower passes over for their protected groups before it gives up the search. */
const PROTECTED_PASSES = 64;

export interface PoolInput {
  pool: string;
  nodes: NodeState[];
  running: RunningJob[];
  queued: QueuedJob[];
  /** Queued jobs that notices (still out, or run out this round) free devices for. */
  preemptors: Set<string>;
  /** Devices jobs taken back this round return to (a `replan` or `compact` move): nobody takes them. */
  held: NodeDevices[];
}

/**
 * Where a job under notice comes back to, or null: its own devices when it changes plan in place
 * (`replan`), those chosen for it when it is moved (`compact`, `spread`). Nobody joins or claims them.
 */
export function returnsTo(r: RunningJob): NodeDevices | null {
  if (r.preemptReason === 'replan') return { nodeId: r.nodeId, devices: r.devices };
  return movesElsewhere(r.preemptReason) ? (r.returnTo ?? null) : null;
}

export function schedulePool(
  input: PoolInput,
  tenants: ReadonlyMap<string, TenantState>,
  activeDevices: Map<string, number>,
  policy: Policy,
  now: number,
  out: Decisions,
): void {
  const model = new PoolModel(input.pool, input.nodes, policy);
  const running = new Map(input.running.map((r) => [r.id, r]));
  const leaving = new Set<string>();
  const claimed = new Set<string>();
  for (const r of input.running) {
    if (!model.slots.has(r.nodeId)) continue;
    model.add(r.nodeId, r.devices, { jobId: r.id, tenantId: r.tenantId, plan: r.plan });
    if (r.preemptRequestedAt === null) continue;
    leaving.add(r.id);
    const back = returnsTo(r);
    if (back) for (const s of model.slotsOf(back.nodeId, back.devices)) s.held = true;
  }
  for (const h of input.held) for (const s of model.slotsOf(h.nodeId, h.devices)) s.held = true;
  // With the running jobs in the model: a cordoned node counts only where they hold it.
  const fair = new FairShare(input.pool, model.shareCapacity(), tenants);
  // How the pool's measured jobs run against the prior: the estimates price unmeasured steps at it.
  const pace = poolPace(input.running, (r) =>
    model.slotsOf(r.nodeId, r.devices).every((s) => s.occupants.length === 1),
  );
  // Each running job's part of the pool: a device shared by n jobs counts 1/n for each.
  const footprint = new Map<string, { devices: number; memory: number }>();
  for (const slots of model.slots.values())
    for (const s of slots)
      for (const o of s.occupants) {
        const f = footprint.get(o.jobId) ?? { devices: 0, memory: 0 };
        f.devices += 1 / s.occupants.length;
        f.memory += o.plan.deviceBytes / s.occupants.length;
        footprint.set(o.jobId, f);
      }
  for (const [id, f] of footprint) {
    const u = fair.of(running.get(id)!.tenantId);
    u.devices += f.devices;
    u.memory += f.memory;
  }
  // By the job itself: a lookup by its id string costs more, 10,000 times a round.
  const plans = new Map<QueuedJob, JobPlan>();
  // The prior prices a device by its threads; the pool's least-threaded device is what a job may get.
  let leastThreads = Infinity;
  for (const n of input.nodes) for (const d of n.devices) leastThreads = Math.min(leastThreads, d.threads);
  const threadsPerDevice = Number.isFinite(leastThreads) ? leastThreads : 1;
  // A job no ready node of the pool holds, even emptied, while the pool has nodes: it waits for a
  // node that can (`unschedulable`), with no estimate, and counts for nothing meanwhile — not as its
  // tenant's demand, not as a job waiting for devices (growth), not as a reservation. A cordoned
  // node counts here: its admin brings it back, and the job then waits for `capacity` (below).
  const unschedulable = (plan: JobPlan) => input.nodes.length > 0 && !model.someNodeHolds(plan);
  for (const j of input.queued) {
    const cap = tenants.get(j.tenantId)?.maxDevicesPerJob ?? j.maxDevices;
    const plan = planJob({
      workload: j.workload,
      devices: j.devices,
      maxDevices: Math.min(j.maxDevices, Math.max(j.devices, cap)),
      memoryPerDeviceBytes: j.memoryPerDeviceBytes,
      profile: j.profile,
      threadsPerDevice,
    });
    plans.set(j, plan);
    if (!unschedulable(plan)) fair.of(j.tenantId).demand += plan.devicesMin;
  }
  fair.settle();

  const waiting: Waiting[] = [];
  const placedHere: PlaceDecision[] = [];
  let blockedBy: QueuedJob | null = null;
  // Within a round the pool only fills up, so a job that did not fit rules out any later job that
  // wants at least as much of everything.
  const misses: Miss[] = [];
  // A borrowing job may not join the groups of tenants within their entitlement, so its misses
  // rule out only its own tenant's later jobs, and only until a placement opens groups to it: one
  // that makes another tenant a borrower (`opened`), or one of its own tenant's.
  const borrowerMisses = new Map<string, { opened: number; own: number; list: Miss[] }>();
  const ownPlacements = new Map<string, number>();
  let opened = 0;
  const missed = (p: JobPlan, joiner: string | null) => {
    if (covers(misses, p)) return true;
    if (joiner === null) return false;
    const b = borrowerMisses.get(joiner);
    return (
      b !== undefined &&
      b.opened === opened &&
      b.own === (ownPlacements.get(joiner) ?? 0) &&
      covers(b.list, p)
    );
  };
  const addMiss = (p: JobPlan, joiner: string | null) => {
    if (joiner === null) return addTo(misses, p);
    const own = ownPlacements.get(joiner) ?? 0;
    let b = borrowerMisses.get(joiner);
    if (!b || b.opened !== opened || b.own !== own)
      borrowerMisses.set(joiner, (b = { opened, own, list: [] }));
    addTo(b.list, p);
  };
  let searches = 0;
  const searchFailed = new Set<string>();
  let highestWaitingPriority = -Infinity;
  // When each job on the pool's devices is predicted to end (ms): running, leaving at its grace.
  const endOf = new Map<string, number>();
  for (const r of input.running)
    endOf.set(
      r.id,
      leaving.has(r.id)
        ? (r.preemptRequestedAt ?? now) + policy.preemptGraceSeconds * 1000
        : now + remainingSeconds(r.plan, r.steps, r.stepsDone, pace) * 1000,
    );
  // An aged job that does not fit holds a reservation from when its devices are predicted free;
  // later jobs still start if they are predicted to end before it (Slurm's backfill), so waiting
  // for one job does not idle the pool.
  let reservedFrom = Infinity;

  // Whether each tenant is within its entitlement, kept until its usage changes (a placement or a
  // preemption of its jobs): asked for every group a borrower passes over.
  const protection = new Map<string, boolean>();
  const withinEntitlement = (tenantId: string) => {
    let p = protection.get(tenantId);
    if (p === undefined) protection.set(tenantId, (p = !fair.borrowing(tenantId)));
    return p;
  };

  // A tenant's usage as the round decides: devices placed or claimed by its preemptors count as
  // its own, devices its jobs are noticed to leave no longer do.
  const addUsage = (tenantId: string, devices: number, memory: number) => {
    const u = fair.of(tenantId);
    u.devices += devices;
    u.memory += memory;
    protection.delete(tenantId);
  };

  // When the jobs placed this round are predicted to end: the ETA replay starts from them.
  const placedEnds: [string, number][] = [];
  const place = (job: QueuedJob, plan: JobPlan, nodeId: string, devices: number[], shared: number) => {
    // Only borrowers kept from owners' devices read these (protectOwnerDevices).
    const wasBorrowing = policy.protectOwnerDevices && fair.borrowing(job.tenantId);
    if (policy.protectOwnerDevices)
      ownPlacements.set(job.tenantId, (ownPlacements.get(job.tenantId) ?? 0) + 1);
    placedEnds.push([job.id, now + remainingSeconds(plan, job.workload.steps, job.stepsDone, pace) * 1000]);
    // Fields named, not spread: 5,000 decisions a round share one object shape.
    const map = stageDeviceMap(plan.mode, devices, {
      generate: plan.generateDevices,
      train: plan.trainDevices,
    });
    const figures = deviceFigures(model, nodeId, devices);
    placedHere.push({
      jobId: job.id,
      tenantId: job.tenantId,
      queueSeq: job.queueSeq,
      nodeId,
      devices,
      mode: map.mode,
      stages: map.stages,
      threadsPerDevice: figures.threadsPerDevice,
      memoryBytes: figures.memoryBytes,
      plan,
      sharedWith: shared,
    });
    model.add(nodeId, devices, { jobId: job.id, tenantId: job.tenantId, plan });
    addUsage(job.tenantId, devices.length, devices.length * plan.deviceBytes);
    fair.of(job.tenantId).demand -= plan.devicesMin;
    if (policy.protectOwnerDevices && !wasBorrowing && fair.borrowing(job.tenantId)) opened++;
    activeDevices.set(job.tenantId, (activeDevices.get(job.tenantId) ?? 0) + devices.length);
  };

  // Jobs that gave their devices back to change plan in place get them again before anyone else.
  const returned = new Set<string>();
  for (const job of input.queued) {
    const back = job.returnTo && returnFit(job, plans.get(job)!, model, tenants, activeDevices);
    if (!back) continue;
    place(job, plans.get(job)!, back.nodeId, back.devices, back.shared);
    returned.add(job.id);
  }
  const queued = returned.size ? input.queued.filter((j) => !returned.has(j.id)) : input.queued;

  // Outside the loop: closures made per job cost a round of 10,000 jobs megabytes of garbage.
  const waitFor = (job: QueuedJob, plan: JobPlan, notBefore: number, reason: WaitReason) => {
    // A job no node of the pool holds is not foreseen (no estimate): the replay counts devices, not
    // their memory, and told a job wanting more memory a device than any has that it starts now.
    waiting.push({ job, plan, reason, notBefore: model.someNodeHolds(plan, true) ? notBefore : Infinity });
    if (reason !== 'quota' && reason !== 'crash_loop' && reason !== 'unschedulable')
      highestWaitingPriority = Math.max(highestWaitingPriority, job.priority);
  };
  // When a job noticed this round leaves its node (ms): at the end of its grace, as one noticed
  // before. By job and node: a moved job's end where it goes is still its run's.
  const leavesAt = new Map<string, { nodeId: string; at: number }>();
  const notice = (jobId: string) => {
    leaving.add(jobId);
    const r = running.get(jobId);
    if (r) leavesAt.set(jobId, { nodeId: r.nodeId, at: now + policy.preemptGraceSeconds * 1000 });
  };
  const endOn = (jobId: string, nodeId: string) =>
    (leavesAt.size ? atNode(leavesAt.get(jobId), nodeId) : undefined) ?? endOf.get(jobId);
  // Notices out this round: their jobs count as gone, and their devices as no longer their tenants'.
  const noticeVictims = (victims: readonly PreemptDecision[]) => {
    for (const v of victims) {
      notice(v.jobId);
      const f = footprint.get(v.jobId);
      if (f) addUsage(v.tenantId, -f.devices, -f.memory);
      out.preempt.push(v);
    }
  };
  const noticeMoves = (moves: readonly CompactionMove[], forJobId: string) => {
    for (const m of moves) {
      notice(m.jobId);
      out.preempt.push({ jobId: m.jobId, tenantId: m.tenantId, reason: 'compact', forJobId, moveTo: m.to });
    }
  };
  // Each tenant's running jobs in the pool, built the first time a job its device quota holds back
  // asks: its growth (quota-shrink.ts), its lower priorities (quota-priority.ts), their ends (ETA).
  let byTenant: Map<string, RunningJob[]> | null = null;
  const runningOf = (tenantId: string): readonly RunningJob[] => {
    if (!byTenant) {
      byTenant = new Map();
      for (const r of input.running) {
        const list = byTenant.get(r.tenantId);
        if (list) list.push(r);
        else byTenant.set(r.tenantId, [r]);
      }
    }
    return byTenant.get(tenantId) ?? [];
  };
  // Devices the tenant would hold beyond its concurrent-device quota with the job; Infinity when its
  // device-hours for the month are spent (nothing running ends that) or it has no quota row.
  const overQuota = (tenant: TenantState | undefined, active: number, plan: JobPlan) =>
    !tenant || tenant.periodDeviceSeconds >= tenant.deviceHoursPerMonth * 3600
      ? Infinity
      : active + plan.devicesMin - tenant.maxConcurrentDevices;
  // When enough of the tenant's jobs in the pool are predicted to have ended for `over` devices to
  // come back under its quota, or Infinity (its jobs elsewhere hold the rest: no estimate).
  const quotaFreesAt = (tenantId: string, devices: number): number => {
    if (!Number.isFinite(devices)) return Infinity;
    const ends = runningOf(tenantId)
      .map((r) => ({ at: leavesAt.get(r.id)?.at ?? endOf.get(r.id) ?? Infinity, n: r.devices.length }))
      .sort((a, b) => a.at - b.at);
    let left = devices;
    for (const e of ends) {
      left -= e.n;
      if (left <= 0) return e.at;
    }
    return Infinity;
  };
  const blockedReason = (b: QueuedJob, job: QueuedJob): WaitReason =>
    b.priority > job.priority ? 'priority' : job.requeueReason === 'preempted' ? 'preempted' : 'capacity';

  for (const job of admissionOrder(queued, plans, fair, policy, now, input.preemptors)) {
    const plan = plans.get(job)!;
    const tenant = tenants.get(job.tenantId);
    const aged = isPromoted(job, fair, policy, now);
    if (unschedulable(plan)) {
      waitFor(job, plan, Infinity, 'unschedulable');
      continue;
    }
    const notBefore = crashBackoffUntil(job, policy);
    if (notBefore > now) {
      waitFor(job, plan, notBefore, 'crash_loop');
      continue;
    }
    const active = activeDevices.get(job.tenantId) ?? 0;
    // Devices over the quota with the job; Infinity: its device-hours are spent, which no notice frees.
    const over = overQuota(tenant, active, plan);
    if (over > 0) {
      let reason: WaitReason = 'quota';
      const own = runningOf(job.tenantId);
      const shrinks =
        policy.preemption && Number.isFinite(over)
          ? quotaShrinks(
              job,
              over,
              own.filter((r) => grownBy(r) > 0),
              leaving,
              policy,
              now,
            )
          : [];
      noticeVictims(shrinks);
      if (
        policy.preemption &&
        Number.isFinite(over) &&
        shrinks.length === 0 &&
        searches < MAX_PREEMPTION_SEARCHES &&
        own.some((r) => r.priority < job.priority && !leaving.has(r.id))
      ) {
        searches++;
        const taken = quotaPriorityPreemption(model, job, plan, over, own, leaving, policy, now);
        if (taken) {
          noticeVictims(taken.victims);
          // Kept for it for the rest of the round, as a preemptor's devices are (`found` below).
          model.add(taken.nodeId, taken.devices, { jobId: job.id, tenantId: job.tenantId, plan });
          reason = 'priority';
        }
      }
      waitFor(job, plan, Math.max(notBefore, quotaFreesAt(job.tenantId, over)), reason);
      continue;
    }
    // Behind a blocked aged job: a job that ends before its reservation may start; with lending any
    // job may, and the aged job takes its devices back when it can start (preempt.ts, `aging`).
    const backfill =
      policy.backfill &&
      blockedBy !== null &&
      ((policy.lendReservedDevices && policy.preemption) ||
        now + remainingSeconds(plan, job.workload.steps, job.stepsDone, pace) * 1000 <= reservedFrom);
    if (blockedBy && !backfill) {
      waitFor(job, plan, notBefore, blockedReason(blockedBy, job));
      continue;
    }
    // A split the planner found fastest alone may cost more device time than sharing: an `auto`
    // job joins a time-share group with its temporal plan when one takes it and that plan wants
    // less of the devices' time per step.
    const temporal = policy.timeSharing ? cheaperTemporalPlan(job, plan, threadsPerDevice) : null;
    // A borrowing job does not share the devices of a tenant within its entitlement: it would slow
    // that tenant's job and halve its share of the device. An aged job may: kept out, it would take
    // its devices back from the jobs lent them, round after round.
    const joiner =
      policy.protectOwnerDevices &&
      !aged &&
      fair.borrowing(job.tenantId, plan.devicesMin, plan.devicesMin * plan.deviceBytes)
        ? job.tenantId
        : null;
    const joined =
      temporal && !missed(temporal, joiner)
        ? findPlacement(model, temporal, policy, joiner, withinEntitlement).fit
        : null;
    if (temporal && joined && joined.shared > 0) {
      place(job, temporal, joined.nodeId, joined.devices, joined.shared);
      continue;
    }
    const search = missed(plan, joiner)
      ? null
      : findPlacement(model, plan, policy, joiner, withinEntitlement);
    const fit = search?.fit ?? null;
    if (fit) {
      place(job, plan, fit.nodeId, fit.devices, fit.shared);
      continue;
    }
    // A miss with no protected group passed over holds for every tenant.
    if (search) addMiss(plan, search.skippedProtected ? joiner : null);
    if (blockedBy) {
      waitFor(job, plan, notBefore, blockedReason(blockedBy, job));
      continue;
    }
    // Only a cordoned node holds it: it waits for `capacity` (the admin's uncordon, or a new node),
    // whatever its tenant's share, and no preemption places it.
    let reason: WaitReason | null = model.someNodeHolds(plan, true) ? null : 'capacity';
    if (
      reason === null &&
      policy.preemption &&
      searches < MAX_PREEMPTION_SEARCHES &&
      !searchFailed.has(job.tenantId)
    ) {
      searches++;
      const ctx = { model, fair, policy, now, running, leaving, claimed, footprint };
      // Devices being freed first; then moving jobs off one node (they lose a restart, nobody loses
      // a place); then preempting by the share, priority and aging rules; last, for a tenant well
      // under its entitlement, clearing a node with both (reclaim-compact.ts).
      const claim = claimLeaving(ctx, plan);
      const compaction =
        claim || !policy.compaction ? null : findCompaction(model, plan, policy, now, running, leaving, job);
      const found = claim || compaction ? null : findVictims(ctx, job, plan, aged);
      const reclaiming =
        claim || compaction || found || !reclaimCompactionApplies(job, fair, policy, now)
          ? null
          : findReclaimingCompaction(ctx, job, plan, victimRules(ctx, job, plan, aged, true));
      // What a preemptor will hold counts as its tenant's for the rest of the round, as its
      // victims' devices no longer count as theirs: its tenant's next job is judged with it.
      // Without it a tenant reclaimed for a second job in the same round and ended over its
      // entitlement (simulator finding 18: 15% fewer notices on the synthetic workload).
      const holds = (devices: readonly number[]) =>
        addUsage(job.tenantId, devices.length, devices.length * plan.deviceBytes);
      if (claim) {
        model.add(claim.nodeId, claim.devices, { jobId: job.id, tenantId: job.tenantId, plan });
        holds(claim.devices);
        reason = 'capacity';
      } else if (compaction) {
        noticeMoves(compaction.moves, job.id);
        reason = 'capacity';
      } else if (found) {
        noticeVictims(found.victims);
        // The devices it will take are reserved for the rest of the round: a later job must not
        // backfill the free ones among them, or the preemptor never fits and preempts again.
        model.add(found.nodeId, found.devices, { jobId: job.id, tenantId: job.tenantId, plan });
        holds(found.devices);
        reason = found.victims[0]?.reason === 'priority' ? 'priority' : 'capacity';
      } else if (reclaiming) {
        noticeVictims(reclaiming.victims);
        noticeMoves(reclaiming.moves, job.id);
        holds(reclaiming.devices);
        reason = 'capacity';
      } else searchFailed.add(job.tenantId);
    }
    reason ??=
      job.requeueReason === 'preempted'
        ? 'preempted'
        : policy.fairShare &&
            fair.fraction(job.tenantId) >= fair.entitlement(job.tenantId) - 1e-9 &&
            fair.entitlement(job.tenantId) < 1
          ? 'fair_share'
          : highestWaitingPriority > job.priority
            ? 'priority'
            : 'capacity';
    waitFor(job, plan, notBefore, reason);
    if (aged || !policy.backfill) {
      blockedBy = job;
      if (policy.backfill) reservedFrom = reservationStart(model, endOn, plan.devicesMin, now);
    }
  }

  growIntoIdleDevices(model, placedHere, waiting, tenants, activeDevices);
  for (const p of placedHere) out.place.push(p);
  if (policy.spreadWhenIdle && policy.timeSharing && !waitsForDevices(waiting))
    for (const m of findSpreads(model, running, leaving, policy, now)) {
      notice(m.jobId);
      out.preempt.push({
        jobId: m.jobId,
        tenantId: m.tenantId,
        reason: 'spread',
        forJobId: m.jobId,
        moveTo: m.to,
      });
    }

  // Devices free when the jobs on them now are predicted to finish.
  for (const [jobId, end] of placedEnds) endOf.set(jobId, end);
  const freeAt: number[][] = [];
  for (const [nodeId, slots] of model.slots)
    freeAt.push(
      slots.map((s) => {
        // A cordoned node's devices free up for nobody (until an admin uncordons it).
        if (model.cordoned(nodeId)) return Infinity;
        let at = now;
        for (const o of s.occupants) at = Math.max(at, endOn(o.jobId, nodeId) ?? now);
        return at;
      }),
    );
  const join = policy.timeSharing
    ? { hosts: joinHosts(model, input.running, placedHere, endOf, leaving, now), policy }
    : undefined;
  for (const v of estimateQueue(input.pool, freeAt, waiting, now, join, pace)) out.queue.push(v);

  for (const [tenantId, u] of fair.usage)
    if (u.devices > 1e-9 || u.demand > 0)
      out.shares.push({
        tenantId,
        pool: input.pool,
        share: fair.fraction(tenantId),
        entitlement: fair.entitlement(tenantId),
        devices: u.devices,
        demand: u.demand,
      });
}

/**
 * An `auto` job's temporal plan on the same devices, when it wants less device time per step in a
 * time-share group (step × (busy + switch share)) than the split the planner chose: a streaming
 * generator is busy all the time and takes no partner, while a temporal job's idle time is a
 * partner's. Under saturation on 16 nodes the planner's splits made Timeshare 0.986× and 0.988×
 * its temporal-only self (seeds 1–3 and 4–6); joining groups this way, 0.998× and 1.001×
 * (docs/simulator.md, finding 10).
 */
function cheaperTemporalPlan(job: QueuedJob, plan: JobPlan, threadsPerDevice: number): JobPlan | null {
  if (plan.mode === 'temporal' || job.workload.mode !== 'auto') return null;
  // Partial rollouts as planJob takes them for an `auto` job's temporal plan: as the spec sets
  // them, else on where the job allows weight lag (they never price a temporal plan higher).
  const partialTail =
    job.workload.partialTail ?? ((job.workload.maxWeightLag ?? 1) >= 1 ? DEFAULT_PARTIAL_TAIL : 0);
  const temporal = planJob({
    workload: { ...job.workload, mode: 'temporal', partialTail },
    devices: plan.devicesMin,
    maxDevices: plan.devicesMin,
    memoryPerDeviceBytes: job.memoryPerDeviceBytes,
    profile: job.profile,
    threadsPerDevice,
  });
  const cost = (p: JobPlan) => p.stepSeconds * (p.busyFraction + switchFraction(p));
  return temporal.devicesMin === plan.devicesMin && cost(temporal) < cost(plan) ? temporal : null;
}

/** The earliest time (ms) `count` devices of one node are predicted free, from their jobs' predicted ends. */
function reservationStart(
  model: PoolModel,
  endOn: (jobId: string, nodeId: string) => number | undefined,
  count: number,
  now: number,
): number {
  let best = Infinity;
  for (const [nodeId, slots] of model.slots) {
    if (slots.length < count || model.cordoned(nodeId)) continue;
    const free = slots
      .map((s) => Math.max(now, ...s.occupants.map((o) => endOn(o.jobId, nodeId) ?? Infinity)))
      .sort((a, b) => a - b);
    best = Math.min(best, free[count - 1]!);
  }
  return best;
}

/** What the engine may use on each device: the smallest of the chosen devices' threads and memory. */
function deviceFigures(model: PoolModel, nodeId: string, devices: number[]) {
  let threads = Infinity;
  let memoryBytes = Infinity;
  for (const s of model.slotsOf(nodeId, devices)) {
    threads = Math.min(threads, s.threads);
    memoryBytes = Math.min(memoryBytes, s.memoryBytes);
  }
  return { threadsPerDevice: Math.max(1, threads), memoryBytes };
}

/** Free devices first (best fit), then the cheapest time-share group on any node. */
interface Miss {
  devices: number;
  load: number;
  bytes: number;
  host: number;
}

/** Whether a miss in `list` wants no more of anything than `p`: then `p` does not fit either. */
function covers(list: readonly Miss[], p: JobPlan): boolean {
  for (const m of list)
    if (
      p.devicesMin >= m.devices &&
      p.busyFraction >= m.load &&
      p.deviceBytes >= m.bytes &&
      p.hostBytes >= m.host
    )
      return true;
  return false;
}

/** Kept as a frontier: a miss implied by another adds nothing, so the list stays a few shapes long. */
function addTo(list: Miss[], p: JobPlan): void {
  if (covers(list, p)) return;
  const m = { devices: p.devicesMin, load: p.busyFraction, bytes: p.deviceBytes, host: p.hostBytes };
  for (let k = list.length - 1; k >= 0; k--) {
    const o = list[k]!;
    if (o.devices >= m.devices && o.load >= m.load && o.bytes >= m.bytes && o.host >= m.host)
      list.splice(k, 1);
  }
  list.push(m);
}

/**
 * `joiner`: a borrowing job's tenant, which may not join a group holding a job of a tenant that
 * `isProtected` (within its entitlement); null: any group. `skippedProtected`: whether the search
 * passed over a group only because it was protected (then its miss holds for `joiner` alone).
 */
function findPlacement(
  model: PoolModel,
  plan: JobPlan,
  policy: Policy,
  joiner: string | null = null,
  isProtected: ((tenantId: string) => boolean) | null = null,
) {
  const exclusive = model.exclusiveFit(plan, plan.devicesMin);
  if (exclusive) return { fit: { ...exclusive, shared: 0 }, skippedProtected: false };
  if (!policy.timeSharing) return { fit: null, skippedProtected: false };
  let bestCost = Infinity;
  let bestNode = '';
  // The cheapest of the first few groups that fit: scanning every node for the very cheapest
  // costs O(nodes) per job, and groups within the load bounds differ little.
  let found = 0;
  let passed = 0;
  let skippedProtected = false;
  // No node has the free devices (exclusiveFit), so only a whole group can take the job: the nodes
  // listed for its width, in order, past those whose groups are all too busy for it.
  const width = plan.devicesMin;
  for (let at = model.nextJoinable(width, 0, plan); at >= 0; at = model.nextJoinable(width, at + 1, plan)) {
    const nodeId = model.joinableAt(width, at);
    model.skippedProtected = false;
    const cost = model.joinCost(nodeId, plan, width, joiner, isProtected);
    if (model.skippedProtected) skippedProtected = true;
    const fits = cost < Infinity;
    if (fits && cost < bestCost) {
      bestCost = cost;
      bestNode = nodeId;
    }
    if (fits && ++found >= SHARED_CANDIDATES) break;
    if (model.skippedProtected && ++passed >= PROTECTED_PASSES) break;
  }
  const best = bestNode ? model.joinGroup(bestNode, plan, width, joiner, isProtected) : null;
  return { fit: best && { nodeId: bestNode, ...best }, skippedProtected };
}

/**
 * Jobs another may join in the estimate: each alone on every device it holds (a whole group of
 * one), or sharing all of them with one partner that ends first (alone from then); none held for a
 * job coming back or leaving; with its predicted end.
 */
function joinHosts(
  model: PoolModel,
  running: readonly RunningJob[],
  placed: readonly PlaceDecision[],
  endOf: ReadonlyMap<string, number>,
  leaving: ReadonlySet<string>,
  now: number,
): JoinHost[] {
  const widths = new Map<string, number>();
  for (const r of running) widths.set(r.id, r.devices.length);
  for (const p of placed) widths.set(p.jobId, p.devices.length);
  const hosts: JoinHost[] = [];
  const consider = (id: string, nodeId: string, devices: readonly number[]) => {
    const end = endOf.get(id);
    if (end === undefined || leaving.has(id)) return;
    const slots = model.slotsOf(nodeId, devices);
    let partner: string | null | undefined;
    let plan: JobPlan | null = null;
    for (const s of slots) {
      const n = s.occupants.length;
      const other = n === 2 ? s.occupants[s.occupants[0]!.jobId === id ? 1 : 0]!.jobId : null;
      // Whole: the same partner (or none) on every device, nobody held.
      if (s.held || n > 2 || (partner !== undefined && other !== partner)) return;
      partner = other;
      plan ??= s.occupants.find((o) => o.jobId === id)?.plan ?? null;
    }
    if (partner === undefined || plan === null) return;
    // With a partner: alone from its end, if it holds exactly these devices.
    const from = partner === null ? now : endOf.get(partner);
    if (partner !== null && widths.get(partner) !== slots.length) return;
    if (from !== undefined && from < end)
      hosts.push({ width: slots.length, node: model.rank(nodeId), plan, from, end });
  };
  for (const r of running) consider(r.id, r.nodeId, r.devices);
  for (const p of placed) consider(p.jobId, p.nodeId, p.devices);
  return hosts;
}

/** When a noticed job leaves this node, if the notice was for its run there. */
function atNode(leaving: { nodeId: string; at: number } | undefined, nodeId: string): number | undefined {
  return leaving?.nodeId === nodeId ? leaving.at : undefined;
}

/** Whether a job waits that devices would start (not one held back by its quota or a crash loop). */
function waitsForDevices(waiting: readonly Waiting[]): boolean {
  return waiting.some(
    (w) => w.reason !== 'quota' && w.reason !== 'crash_loop' && w.reason !== 'unschedulable',
  );
}

/**
 * `maxDevices`: a job placed this round takes more free devices of its node, up to its maximum,
 * only when no job of the pool waits for capacity (growth never delays anyone) and its tenant's
 * device quota allows.
 */
function growIntoIdleDevices(
  model: PoolModel,
  placed: PlaceDecision[],
  waiting: readonly Waiting[],
  tenants: ReadonlyMap<string, TenantState>,
  activeDevices: Map<string, number>,
): void {
  if (waitsForDevices(waiting)) return;
  for (const p of placed) {
    const extra = p.plan.devicesMax - p.devices.length;
    if (extra <= 0 || p.sharedWith > 0) continue;
    const tenant = tenants.get(p.tenantId)!;
    const room = Math.min(extra, tenant.maxConcurrentDevices - (activeDevices.get(p.tenantId) ?? 0));
    const free = model
      .freeOn(p.nodeId)
      .filter((i) => model.slotsOf(p.nodeId, [i])[0]!.memoryBytes >= p.plan.deviceBytes);
    const more = free.slice(0, Math.max(0, room));
    if (more.length === 0) continue;
    model.add(p.nodeId, more, { jobId: p.jobId, tenantId: p.tenantId, plan: p.plan });
    p.devices = [...p.devices, ...more].sort((a, b) => a - b);
    Object.assign(
      p,
      stageDeviceMap(p.plan.mode, p.devices, {
        generate: p.plan.generateDevices,
        train: p.plan.trainDevices,
      }),
      deviceFigures(model, p.nodeId, p.devices),
    );
    activeDevices.set(p.tenantId, (activeDevices.get(p.tenantId) ?? 0) + more.length);
  }
}

/**
 * Where a job that gave its devices back to change plan in place goes again: those devices, with
 * the plan it is priced at now, if every one can still take it (nothing is placed between rounds,
 * and nobody claims or joins a `replan` job's devices while it checkpoints, so they normally can).
 */
function returnFit(
  job: QueuedJob,
  plan: JobPlan,
  model: PoolModel,
  tenants: ReadonlyMap<string, TenantState>,
  activeDevices: ReadonlyMap<string, number>,
): { nodeId: string; devices: number[]; shared: number } | null {
  const to = job.returnTo!;
  const slots = model.slotsOf(to.nodeId, to.devices);
  const tenant = tenants.get(job.tenantId);
  const fits =
    slots.length === to.devices.length &&
    to.devices.length >= plan.devicesMin &&
    to.devices.length <= plan.devicesMax &&
    tenant !== undefined &&
    (activeDevices.get(job.tenantId) ?? 0) + to.devices.length <= tenant.maxConcurrentDevices &&
    slots.every((s) => model.canJoin(s, plan));
  if (!fits) return null;
  return {
    nodeId: to.nodeId,
    devices: [...to.devices].sort((a, b) => a - b),
    shared: slots.filter((s) => s.occupants.length > 0).length,
  };
}
