/**
 * Choosing victims for a queued job that fits nowhere. Allowed victims (each past its minimum run
 * time, none already under notice, none measured to end within the grace period: min-run.ts):
 *   priority — a lower-priority job of the same tenant;
 *   reclaim  — a job of a borrowing tenant, when the preemptor's tenant is not borrowing after
 *              admission and its share after admission ≤ the victim tenant's share after the victim
 *              and the search's other victims of that tenant leave (Kueue's
 *              LessThanOrEqualToFinalShare, `reasonsTogether`: two tenants cannot take turns
 *              preempting each other, since each preemption moves the shares towards each other);
 *   shrink   — a job holding more devices than its spec's minimum (grown into idle devices by
 *              `maxDevices`), for a job that fits in what it grew into: growth never delays anyone,
 *              and it restarts at its minimum beside the preemptor. Any job's, after the others:
 *              a job grown from 1 to 4 devices kept every narrower job waiting until it ended, since
 *              nothing joins a 4-device group and its whole footprint leaving failed the share rule;
 *   aging    — for a job past the aging bound, a job of no higher priority under the same share rule;
 *              and, with `lendReservedDevices`, any job of no higher priority that was placed on
 *              loan: queued after the aged job and placed while it was already waiting past the bound
 *              (another tenant's only under the share rule when the aged job's tenant would borrow
 *              after admission: on one Philly window an aged job of a tenant at 0.90 of the pool took
 *              a lent device back from a tenant at 0.025 of its 0.0375, which reclaimed it, 200
 *              times in an hour; docs/simulator.md, finding 12).
 * The preemptor's share after admission counts the part of the pool it would hold where it lands
 * (a device shared by n jobs counts 1/n, as shares are measured). A wide aged job of a starved
 * tenant may also preempt while its tenant holds less before admission than the victim's tenant
 * after (finding 18).
 * On each node victims are taken highest-share tenant first, then lowest priority, then most
 * recently placed, until the job fits, and each is dropped again (the last taken first) if the job
 * still fits without it; the node that needs the fewest victims wins. Jobs already
 * under notice count as gone: a job they make room for claims them first (`claimLeaving`), and
 * nobody new is preempted or moved for it.
 */
import { switchFraction, type PoolModel, type Slot } from './cluster.js';
import type { FairShare } from './fair-share.js';
import type { JobPlan, Policy, PreemptDecision, QueuedJob, RunningJob } from './types.js';
import { mayNotice } from './min-run.js';

/**
 * Nodes looked at past the last fit found before the search takes the best so far. On a full pool
 * of 512 nodes nearly every node can take a 2-device job with two victims and none with one, and
 * proving that cost a round of bench:scheduler's 10,000 jobs 25–40 ms of its ~67 ms (8 searches
 * scanning all 512 nodes). A victim more on a large pool is the price; a pool of up to this many
 * nodes more than the first fit (every pool of the simulator) is searched whole, as before.
 */
export const SCAN_AFTER_FIT = 64;

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

/** Devices a running job holds beyond its spec's minimum: what it grew into (`maxDevices`). */
export function grownBy(v: RunningJob): number {
  return v.devices.length - (v.minDevices ?? v.devices.length);
}

/** A job's part of the pool: devices (a device shared by n jobs counts 1/n) and device memory. */
export interface Footprint {
  devices: number;
  memory: number;
}

/** What a victim search asks of each running job, for one preempting job. */
export interface VictimRules {
  reasonOf: (v: RunningJob) => PreemptDecision['reason'] | null;
  /**
   * The reasons with the preemptor holding `at` of the pool once placed (`reasonOf` judges it at
   * the lightest part it could hold): checked again once the search knows where the job would go.
   */
  reasonsAt: (at: Footprint) => VictimJudge;
  hasReason: (jobId: string) => boolean;
  /** The order victims are taken in: highest-share tenant first, then lowest priority, then most recently placed. */
  byShare: (a: RunningJob, b: RunningJob) => number;
}

/**
 * A running job's reason to be preempted, with `tenantGone` of its tenant's part of the pool (its
 * other victims') gone as well as its own.
 */
export type VictimJudge = (v: RunningJob, tenantGone?: Footprint) => PreemptDecision['reason'] | null;

/**
 * Each victim's reason with the victims before it of the same tenant gone too, or null when one
 * then has none. Kueue removes a tenant's victims from its usage one after another before judging
 * the next: judged alone, each passed the share rule while together they took the tenant below the
 * preemptor (a 2-device job took three 4-device jobs sharing a node's devices, leaving the tenant
 * nothing there, and so entitled to take them back).
 */
export function reasonsTogether(
  judge: VictimJudge,
  victims: readonly RunningJob[],
  footprint: ReadonlyMap<string, Footprint>,
): PreemptDecision['reason'][] | null {
  const gone = new Map<string, Footprint>();
  const reasons: PreemptDecision['reason'][] = [];
  for (const v of victims) {
    const before = gone.get(v.tenantId);
    const reason = judge(v, before);
    if (reason === null) return null;
    reasons.push(reason);
    const f = footprint.get(v.id);
    gone.set(v.tenantId, {
      devices: (before?.devices ?? 0) + (f?.devices ?? 0),
      memory: (before?.memory ?? 0) + (f?.memory ?? 0),
    });
  }
  return reasons;
}

/**
 * The reason, if any, each running job may be preempted for `job` (priority, reclaim or aging),
 * worked out once per job and search, and the order victims are taken in. With `underEntitlement`
 * a tenant holding less than its entitlement may reclaim even if admitting the job takes it over
 * (a wide job against a small entitlement: compaction with reclaimed destinations,
 * reclaim-compact.ts). With `lightest` the preemptor is judged as holding the least it could
 * (joining the fullest groups): the search then checks its choice with `reasonsAt`.
 */
export function victimRules(
  ctx: VictimContext,
  job: QueuedJob,
  plan: JobPlan,
  aged: boolean,
  underEntitlement = false,
  lightest = false,
): VictimRules {
  const { fair, policy, now } = ctx;
  const need = plan.devicesMin;
  const whole: Footprint = { devices: need, memory: need * plan.deviceBytes };
  // With `lightest`, judged as joining groups as full as a device takes (each device counts 1/n):
  // every victim any placement could allow; the search checks its choice with `reasonsAt`.
  const n = lightest && policy.timeSharing ? Math.max(1, policy.maxJobsPerDevice) : 1;
  // An aged job wider than its tenant's room (admitting it makes the tenant borrow) of a tenant
  // well under its entitlement: see `finalShareOk`.
  const shareBefore = fair.share(job.tenantId);
  const wideAndStarved =
    aged && fair.starved(job.tenantId) && fair.borrowing(job.tenantId, whole.devices, whole.memory);
  const agedAt = job.queuedAt + policy.agingBoundSeconds * 1000;
  const onLoan = (v: RunningJob) => v.queuedAt > job.queuedAt && v.placedAt >= agedAt;
  // The reasons with the preemptor holding `at` of the pool once placed: its side of the share
  // rules worked out once, then asked of each running job.
  const reasonsAt = (at: Footprint) => {
    const preemptorShare = fair.share(job.tenantId, at.devices, at.memory);
    const preemptorBorrows = fair.borrowing(job.tenantId, at.devices, at.memory);
    const reclaimBlocked = underEntitlement ? fair.borrowing(job.tenantId) : preemptorBorrows;
    // Kueue's LessThanOrEqualToFinalShare: the preemptor's share after admission is no more than
    // the victim's tenant's once the victim leaves. A wide aged job of a starved tenant may also
    // preempt while its tenant's share before admission is below the victim tenant's after: wider
    // than the gap between the shares, it passes the first rule against nobody and waited for jobs
    // to end, hours past the aging bound (docs/simulator.md, finding 18). Neither tenant can take
    // the devices back by either rule. The first rule counts the victim's tenant's other victims
    // of the search gone too (`tenantGone`, reasonsTogether); the exception judges each alone, as
    // measured in finding 18 (together, a tenant's last victim leaves it at the starved tenant's 0).
    const finalShareOk = (v: RunningJob, tenantGone: Footprint | undefined) => {
      const f = ctx.footprint.get(v.id);
      const alone = fair.share(v.tenantId, -(f?.devices ?? 0), -(f?.memory ?? 0));
      const together = tenantGone
        ? fair.share(
            v.tenantId,
            -(f?.devices ?? 0) - tenantGone.devices,
            -(f?.memory ?? 0) - tenantGone.memory,
          )
        : alone;
      return preemptorShare <= together + 1e-12 || (wideAndStarved && shareBefore < alone - 1e-12);
    };
    const reasonFor = (
      v: RunningJob,
      tenantGone: Footprint | undefined,
    ): PreemptDecision['reason'] | null => {
      if (aged && policy.lendReservedDevices && v.priority <= job.priority && onLoan(v)) {
        // A lent device goes back to the aged job, but not across tenants against the share rule
        // when the aged job's tenant would borrow: the device went where the fair order would have
        // sent it, and taking it back only starts a reclaim the other way. (Judged by the tenants'
        // entitlements instead, it thrashed as before: a tenant that wants nothing more is entitled
        // to exactly what it holds until its job is taken back.)
        if (
          v.tenantId === job.tenantId ||
          !policy.fairShare ||
          !preemptorBorrows ||
          finalShareOk(v, tenantGone)
        )
          return 'aging';
      }
      if (v.tenantId === job.tenantId) return v.priority < job.priority ? 'priority' : null;
      if (!policy.fairShare) return null;
      if (!finalShareOk(v, tenantGone)) return null;
      if (!reclaimBlocked && fair.borrowing(v.tenantId)) return 'reclaim';
      if (aged && v.priority <= job.priority) return 'aging';
      return null;
    };
    return (v: RunningJob, tenantGone?: Footprint): PreemptDecision['reason'] | null => {
      if (ctx.leaving.has(v.id) || !mayNotice(v, policy, now)) return null;
      // A job giving back only what it grew into is told so, whichever rule also allows it.
      return need <= grownBy(v) ? 'shrink' : reasonFor(v, tenantGone);
    };
  };
  const judged = reasonsAt({ devices: whole.devices / n, memory: whole.memory / n });

  // A running job's reason is the same on every node it spans: worked out once per search.
  const reasons = new Map<string, PreemptDecision['reason'] | null>();
  const reasonOf = (v: RunningJob) => {
    let r = reasons.get(v.id);
    if (r === undefined) reasons.set(v.id, (r = judged(v)));
    return r;
  };
  const hasReason = (jobId: string) => {
    const v = ctx.running.get(jobId);
    return v !== undefined && reasonOf(v) !== null;
  };
  const shareOf = new Map<string, number>();
  const tenantShare = (tenantId: string) => {
    let s = shareOf.get(tenantId);
    if (s === undefined) shareOf.set(tenantId, (s = fair.share(tenantId)));
    return s;
  };
  const byShare = (a: RunningJob, b: RunningJob) =>
    tenantShare(b.tenantId) - tenantShare(a.tenantId) ||
    a.priority - b.priority ||
    b.placedAt - a.placedAt ||
    (a.id < b.id ? -1 : 1);
  return { reasonOf, reasonsAt, hasReason, byShare };
}

export function findVictims(
  ctx: VictimContext,
  job: QueuedJob,
  plan: JobPlan,
  aged: boolean,
): { victims: PreemptDecision[]; nodeId: string; devices: number[] } | null {
  const { model, policy } = ctx;
  const need = plan.devicesMin;
  const { reasonOf, reasonsAt, hasReason, byShare } = victimRules(ctx, job, plan, aged, false, true);

  let best: { nodeId: string; devices: number[]; victims: PreemptDecision[]; claims: string[] } | null = null;
  let sinceBest = 0;
  for (const [nodeId, slots] of model.slots) {
    // One victim is the fewest a job that did not fit can need: no later node can do better.
    if (best && best.victims.length <= 1) break;
    if (best && ++sinceBest > SCAN_AFTER_FIT) break;
    // A bound before building anything: could the job fit with every leaving job and every allowed
    // victim gone? Most nodes of a busy pool could not.
    if (!couldFit(slots, plan, need, policy, (s, id) => claimableBy(ctx, s, id) || hasReason(id))) continue;
    const exclude = new Set<string>(leavingJobsOn(ctx, slots));
    const candidates = stayingJobsOn(ctx, slots)
      .filter((v) => reasonOf(v) !== null)
      .sort(byShare)
      .map((v) => ({ v, reason: reasonOf(v)! }));
    // The same bound as victims are added: fitting is tried only once it can succeed.
    const chosen: PreemptDecision[] = [];
    for (const c of candidates) {
      if (best && chosen.length + 1 >= best.victims.length) break;
      exclude.add(c.v.id);
      chosen.push({ jobId: c.v.id, tenantId: c.v.tenantId, reason: c.reason, forJobId: job.id });
      if (!couldFit(slots, plan, need, policy, (_s, id) => exclude.has(id))) continue;
      let fit = model.fitOnNode(nodeId, plan, need, exclude);
      if (!fit) continue;
      // Only the victims the fit needs, the lowest in the order dropped first: taken highest share
      // first wherever they run on the node, some hold devices the job does not take, or share a
      // group it can join beside them (a 2-device job took 13 notices in one round, simulator).
      for (let k = chosen.length - 1; k >= 0; k--) {
        const id = chosen[k]!.jobId;
        exclude.delete(id);
        const without = model.fitOnNode(nodeId, plan, need, exclude);
        if (without) {
          fit = without;
          chosen.splice(k, 1);
        } else exclude.add(id);
      }
      // Of victims alike in the order but for when they were placed (same tenant and priority),
      // the one holding fewer devices where it makes room as well: a 1-device job took a 2-device
      // job's run, the most recently placed, where a 1-device one would have done (QA).
      if (policy.smallerVictims)
        fit =
          preferSmallerVictims(
            chosen,
            candidates,
            exclude,
            (ex) => model.fitOnNode(nodeId, plan, need, ex),
            ctx,
          ) ?? fit;
      // The share rules again with the part of the pool the job holds there: each of its devices
      // counts 1/n beside the jobs that stay. More victims would only make that part larger.
      // A tenant's victims are judged together (reasonsTogether).
      const reasonHere = reasonsAt(footprintAt(model.slotsOf(nodeId, fit.devices), plan, exclude));
      const reasons = reasonsTogether(
        reasonHere,
        chosen.map((d) => ctx.running.get(d.jobId)!),
        ctx.footprint,
      );
      if (reasons) {
        const confirmed = chosen.map((d, i) => ({ ...d, reason: reasons[i]! }));
        best = { nodeId, devices: fit.devices, victims: confirmed, claims: [...exclude] };
        sinceBest = 0;
      }
      break;
    }
  }
  if (!best) return null;
  for (const id of best.claims) ctx.claimed.add(id);
  return { victims: best.victims, nodeId: best.nodeId, devices: best.devices };
}

/**
 * Swaps each chosen victim, last first, for a candidate of the same tenant and priority that holds
 * fewer devices, if the job still fits with it gone instead: as many victims, fewer devices stopped
 * (each restarts from its checkpoint and waits again). `chosen` and `exclude` are changed in place;
 * returns the fit after the last swap, or null when nothing was swapped.
 */
function preferSmallerVictims<F>(
  chosen: PreemptDecision[],
  candidates: readonly { v: RunningJob; reason: PreemptDecision['reason'] }[],
  exclude: Set<string>,
  fits: (exclude: ReadonlySet<string>) => F | null,
  ctx: VictimContext,
): F | null {
  let last: F | null = null;
  for (let k = chosen.length - 1; k >= 0; k--) {
    const c = ctx.running.get(chosen[k]!.jobId)!;
    const smaller = candidates
      .filter(
        (u) =>
          !exclude.has(u.v.id) &&
          u.v.devices.length < c.devices.length &&
          u.v.tenantId === c.tenantId &&
          u.v.priority === c.priority,
      )
      .sort((x, y) => x.v.devices.length - y.v.devices.length);
    for (const u of smaller) {
      exclude.delete(c.id);
      exclude.add(u.v.id);
      const fit = fits(exclude);
      if (fit) {
        last = fit;
        chosen[k] = { ...chosen[k]!, jobId: u.v.id, reason: u.reason };
        break;
      }
      exclude.delete(u.v.id);
      exclude.add(c.id);
    }
  }
  return last;
}

/** The part of the pool a job placed on these slots holds beside the occupants not in `gone`. */
function footprintAt(slots: readonly Slot[], plan: JobPlan, gone: ReadonlySet<string>): Footprint {
  let devices = 0;
  for (const s of slots) {
    let n = 1;
    for (const o of s.occupants) if (!gone.has(o.jobId)) n++;
    devices += 1 / n;
  }
  return { devices, memory: devices * plan.deviceBytes };
}

/**
 * A necessary condition for `fitOnNode` with the jobs `gone` says are gone: `need` free devices, or
 * `need` devices one staying job spans (a time-share group is joined whole) that have room and load
 * to spare. Cheap and allocation-free for the common case, so the victim search skips nodes early.
 */
export function couldFit(
  slots: readonly Slot[],
  plan: JobPlan,
  need: number,
  policy: Policy,
  gone: (s: Slot, jobId: string) => boolean,
): boolean {
  let free = 0;
  let shared: Map<string, number> | null = null;
  const planLoad = plan.busyFraction + switchFraction(plan);
  for (const s of slots) {
    if (s.held || s.memoryBytes < plan.deviceBytes) continue;
    let stay = 0;
    let load = planLoad;
    // Slots of one group hold the same jobs, so the smallest id among them is the same on each:
    // counting by it can only overcount, which keeps the bound a necessary condition.
    let key: string | null = null;
    for (const o of s.occupants)
      if (!gone(s, o.jobId)) {
        stay++;
        load += o.plan.busyFraction + switchFraction(o.plan);
        if (key === null || o.jobId < key) key = o.jobId;
      }
    if (stay === 0) free++;
    else if (policy.timeSharing && stay < policy.maxJobsPerDevice && load <= policy.maxGroupLoad) {
      shared ??= new Map();
      shared.set(key!, (shared.get(key!) ?? 0) + 1);
    }
  }
  if (free >= need) return true;
  if (shared) for (const n of shared.values()) if (n >= need) return true;
  return false;
}

/** Reasons whose job moves to devices the round chose (`moveTo`) and is placed there first. */
export const MOVE_REASONS: readonly PreemptDecision['reason'][] = ['compact', 'spread'];

export function movesElsewhere(reason: string | null | undefined): boolean {
  return (MOVE_REASONS as readonly string[]).includes(reason ?? '');
}

/**
 * The job a requeued victim's devices go to first (`QueuedJob.preemptedFor`): its preemptor, for a
 * preemption by reclaim, aging, priority or shrink. A move elsewhere has its own (`returnFor`), and a
 * re-planning move frees devices for nobody.
 */
export function preemptedForOf(
  reason: string | null | undefined,
  forJobId: string | null | undefined,
): string | null {
  return reason === 'reclaim' || reason === 'aging' || reason === 'priority' || reason === 'shrink'
    ? (forJobId ?? null)
    : null;
}

/**
 * The running jobs on these slots that are not under notice, each once. Only where they run: a job
 * the round moves (a compaction decided, or one being weighed) also sits on the devices it moves to,
 * and there it is neither a victim nor a job to move. Taking it for one removed its real place
 * from the model, and a device took a fourth job beside three (simulator, node failures, seed 1).
 */
export function stayingJobsOn(ctx: VictimContext, slots: readonly Slot[]): RunningJob[] {
  const out = new Map<string, RunningJob>();
  for (const s of slots)
    for (const o of s.occupants) {
      if (ctx.leaving.has(o.jobId) || out.has(o.jobId)) continue;
      const r = ctx.running.get(o.jobId);
      if (r && r.nodeId === s.node.id) out.set(o.jobId, r);
    }
  return [...out.values()];
}

/**
 * Devices a job under notice is leaving may be claimed, on the node it leaves: not where the round
 * moves it, and not if held (a job comes back to them, pool-round.ts).
 */
export function claimableBy(ctx: VictimContext, s: Slot, jobId: string): boolean {
  return (
    ctx.leaving.has(jobId) &&
    !s.held &&
    !ctx.claimed.has(jobId) &&
    ctx.running.get(jobId)?.nodeId === s.node.id
  );
}

export function leavingJobsOn(ctx: VictimContext, slots: readonly Slot[]): string[] {
  const ids: string[] = [];
  for (const s of slots)
    for (const o of s.occupants)
      if (claimableBy(ctx, s, o.jobId) && !ids.includes(o.jobId)) ids.push(o.jobId);
  return ids;
}

/**
 * Devices already being freed go to the first job in order that they fit: it claims just as many
 * leaving jobs as it needs, and nobody new is preempted or moved for it. Tried before anything else.
 */
export function claimLeaving(
  ctx: VictimContext,
  plan: JobPlan,
): { nodeId: string; devices: number[] } | null {
  const need = plan.devicesMin;
  // Most rounds have no notice out: nothing to claim, and no node to look at.
  let unclaimed = false;
  for (const id of ctx.leaving) if (!ctx.claimed.has(id)) unclaimed = true;
  if (!unclaimed) return null;
  for (const [nodeId, slots] of ctx.model.slots) {
    const exclude = new Set<string>();
    for (const id of leavingJobsOn(ctx, slots)) {
      exclude.add(id);
      const fit = ctx.model.fitOnNode(nodeId, plan, need, exclude);
      if (fit) {
        for (const e of exclude) ctx.claimed.add(e);
        return { nodeId, devices: fit.devices };
      }
    }
  }
  return null;
}
