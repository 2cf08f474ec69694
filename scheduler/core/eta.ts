/**
 * Queue positions and estimated start times for one pool. The estimate replays the queue in order
 * on the pool's nodes: each device is free when the jobs on it now are predicted to finish (their
 * remaining steps × predicted step time; a job under preemption notice, one sent this round
 * included, when its grace period ends),
 * and each queued job takes the node where its width in devices frees up first, for its predicted
 * run (node-free-times.ts). Under time-sharing a queued job may instead join a job alone on devices
 * of its width whose load admits it (a whole group, as the round joins them), if that starts
 * earlier: a running job, from now or from when its partner ends, or a job the replay started alone
 * before it. A joiner runs slowed by the pair's load while its host runs; one that outlives its host
 * keeps the host's devices after it ends (alone on them, itself open to a join), which the replay
 * allows only while it has promised those devices to nobody else, so they are never promised twice
 * (joining only hosts that outlive the joiner, the estimate told jobs that started by joining a
 * median half hour late; docs/simulator.md). Lent devices are not foreseen, so this errs late; a
 * job no node holds (wider than every node, or more memory a device than any has) gets null.
 */
import { NodeFreeTimes } from './node-free-times.js';
import { pairAdmits, switchFraction } from './cluster.js';
import { remainingSeconds } from '../planner/plan-job.js';
import type { JobPlan, Policy, QueueEntryView, QueuedJob, WaitReason } from './types.js';

export interface Waiting {
  job: QueuedJob;
  plan: JobPlan;
  reason: WaitReason;
  /**
   * Earliest time it may start regardless of capacity (crash back-off; for a job its quota holds
   * back, when its tenant's jobs free the quota), or 0; Infinity: not foreseen.
   */
  notBefore: number;
}

/** A job alone on its devices (from `from`) that another job of its width may join until it ends. */
export interface JoinHost {
  width: number;
  /** Its node's index in the replay's node list (`estimateQueue`'s `nodeFreeAt`). */
  node: number;
  plan: JobPlan;
  /** When it is alone on them (ms): now, or when the partner it has now is predicted to end. */
  from: number;
  /** Its predicted end (ms). */
  end: number;
}

export interface JoinRule {
  hosts: readonly JoinHost[];
  /** The policy whose group rule (`pairAdmits`) says which joins a device takes. */
  policy: Policy;
}

/** A plan's part of a shared device's time: busy share and switch share. */
const loadOf = (p: JobPlan) => p.busyFraction + switchFraction(p);

/** Openings a join sets aside per load class because their devices were promised after their host. */
const PROMISED_LOOKS = 4;

/** Openings are kept by their host's load in steps of this much, so a search skips the too busy. */
const LOAD_STEP = 0.1;

interface Opening {
  host: JoinHost;
  /** From when the estimate has nobody else joined to it (ms). */
  from: number;
}

/** Openings per width and load class, each class a min-heap by `from`. */
class Openings {
  private readonly byWidth = new Map<number, Opening[][]>();

  constructor(
    hosts: readonly JoinHost[],
    now: number,
    private readonly policy: Policy,
  ) {
    for (const host of hosts) this.add({ host, from: Math.max(now, host.from) });
  }

  add(o: Opening): void {
    let classes = this.byWidth.get(o.host.width);
    if (!classes) this.byWidth.set(o.host.width, (classes = []));
    const c = Math.max(0, Math.floor(loadOf(o.host.plan) / LOAD_STEP));
    while (classes.length <= c) classes.push([]);
    const h = classes[c]!;
    let i = h.length;
    h.push(o);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p]!.from <= o.from) break;
      h[i] = h[p]!;
      i = p;
    }
    h[i] = o;
  }

  private pop(h: Opening[]): Opening {
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= h.length) break;
        const r = l + 1;
        const m = r < h.length && h[r]!.from < h[l]!.from ? r : l;
        if (h[m]!.from >= last.from) break;
        h[i] = h[m]!;
        i = m;
      }
      h[i] = last;
    }
    return top;
  }

  /**
   * Takes the earliest opening of `width` whose host admits `plan`, starting no later than `latest`,
   * for the joiner's run: slowed by the pair's load while the host runs, alone after. A joiner that
   * outlives its host keeps the host's devices, so only while `free` has promised them to nobody
   * else; they stay taken until its end. Returns when it starts and ends and, if it outlives its
   * host, from when it is alone there; or null. Each load class offers its earliest opening that it
   * may take (looking past a few promised ones): looking deeper at openings it could take gave the
   * simulator the same estimates at a higher cost to the round.
   */
  join(
    width: number,
    plan: JobPlan,
    seconds: number,
    notBefore: number,
    latest: number,
    free: NodeFreeTimes,
  ): { start: number; end: number; aloneFrom: number | null; node: number } | null {
    const classes = this.byWidth.get(width);
    if (!classes) return null;
    const own = loadOf(plan);
    // Classes whose every host is too busy for this job under the load rule are not looked at.
    const top = Math.min(classes.length - 1, Math.floor((this.policy.maxGroupLoad - own) / LOAD_STEP + 1e-9));
    let best = -1;
    let bestStart = Infinity;
    let bestEnd = 0;
    let bestOutlives = false;
    // Openings whose devices the replay promised after their host ends (a job started there) take
    // only joiners that end first; set aside so the openings behind them are seen, and put back.
    const aside: Opening[] = [];
    for (let c = 0; c <= top; c++) {
      const heap = classes[c]!;
      for (let looked = 0; heap.length > 0;) {
        const o = heap[0]!;
        const start = Math.max(o.from, notBefore);
        if (start > latest || start >= bestStart || !pairAdmits(this.policy, o.host.plan, plan)) break;
        const slowdown = Math.max(1, loadOf(o.host.plan) + own);
        let end = start + seconds * 1000 * slowdown;
        const outlives = end > o.host.end;
        if (outlives && !free.holds(o.host.node, width, o.host.end)) {
          if (++looked > PROMISED_LOOKS) break;
          aside.push(this.pop(heap));
          continue;
        }
        if (outlives) end = o.host.end + seconds * 1000 - (o.host.end - start) / slowdown;
        best = c;
        bestStart = start;
        bestEnd = end;
        bestOutlives = outlives;
        break;
      }
    }
    const o = best < 0 ? null : this.pop(classes[best]!);
    for (const a of aside) this.add(a);
    if (!o) return null;
    if (bestOutlives) {
      // The host ends first: its devices stay the joiner's, alone on them from then.
      free.extend(o.host.node, width, o.host.end, bestEnd);
      return { start: bestStart, end: bestEnd, aloneFrom: o.host.end, node: o.host.node };
    }
    // Taken until the joiner ends, and open again from then.
    o.from = bestEnd;
    this.add(o);
    return { start: bestStart, end: bestEnd, aloneFrom: null, node: o.host.node };
  }
}

export function estimateQueue(
  pool: string,
  nodeFreeAt: number[][],
  waiting: readonly Waiting[],
  now: number,
  join?: JoinRule,
  /** The pool's pace (pace.ts): unmeasured steps of the queued jobs' runs are priced at it. */
  pace = 1,
): QueueEntryView[] {
  const openings = join ? new Openings(join.hosts, now, join.policy) : null;
  // The lightest queued job (busy + switch share): a job started in the replay becomes an opening
  // only if that one could join it, so a queue nobody can pair in costs the replay nothing more.
  let lightest = Infinity;
  if (join) for (const w of waiting) lightest = Math.min(lightest, loadOf(w.plan));
  const roomFor = join ? join.policy.maxGroupLoad - lightest : -Infinity;
  const free = new NodeFreeTimes(nodeFreeAt, now);
  const estimates = new Map<Waiting, { start: number; end: number }>();
  const replay = (w: Waiting) => {
    const need = w.plan.devicesMin;
    // A job its quota holds back starts no earlier than its tenant's jobs free the quota (`notBefore`;
    // Infinity: not foreseen, no estimate).
    const own = Number.isFinite(w.notBefore) ? free.earliest(need) : null;
    if (!own) return;
    const seconds = remainingSeconds(w.plan, w.job.workload.steps, w.job.stepsDone, pace);
    const notBefore = Math.max(now, w.notBefore);
    // Devices of its own, unless a join starts earlier (free devices go first, as in the round).
    const start = Math.max(notBefore, own.at);
    const joined =
      start > notBefore ? (openings?.join(need, w.plan, seconds, notBefore, start - 1, free) ?? null) : null;
    if (joined) {
      estimates.set(w, { start: joined.start, end: joined.end });
      // Alone once its host ended: a job later in the queue may join it there.
      if (joined.aloneFrom !== null && loadOf(w.plan) <= roomFor) {
        const host = {
          width: need,
          plan: w.plan,
          from: joined.aloneFrom,
          end: joined.end,
          node: joined.node,
        };
        openings!.add({ host, from: joined.aloneFrom });
      }
      return;
    }
    const end = start + seconds * 1000;
    free.occupy(own.node, need, end);
    // Once started alone, a job later in the queue may join it.
    if (openings && loadOf(w.plan) <= roomFor)
      openings.add({ host: { width: need, plan: w.plan, from: start, end, node: own.node }, from: start });
    estimates.set(w, { start, end });
  };
  // A job held back until later (its quota, a crash back-off) keeps its place in the order from
  // then on, and holds nothing before: the round skips it until then, and the jobs behind it start
  // on what is free meanwhile. Replayed in order, it took its devices from when they were free and
  // told the jobs behind it they wait for it (a job told 3 min 16 s, started 0.6 s later: QA).
  // So it is replayed once the replay reaches its time: before the first job after it whose start
  // would come later.
  const held: Waiting[] = [];
  const replayHeldUntil = (t: number) => {
    while (held.length > 0 && held[0]!.notBefore <= t) replay(held.shift()!);
  };
  for (const w of waiting) {
    if (w.notBefore > now && Number.isFinite(w.notBefore)) {
      // Kept in order of their times (ties in queue order): the few a pool has, sorted by insertion.
      let i = held.length;
      while (i > 0 && held[i - 1]!.notBefore > w.notBefore) i--;
      held.splice(i, 0, w);
      continue;
    }
    if (held.length > 0) {
      const own = free.earliest(w.plan.devicesMin);
      replayHeldUntil(own ? Math.max(now, w.notBefore, own.at) : Infinity);
    }
    replay(w);
  }
  replayHeldUntil(Infinity);

  const views: QueueEntryView[] = [];
  const perTenant = new Map<string, number>();
  let position = 0;
  for (const w of waiting) {
    position++;
    const tenantPosition = (perTenant.get(w.job.tenantId) ?? 0) + 1;
    perTenant.set(w.job.tenantId, tenantPosition);
    const e = estimates.get(w);
    views.push({
      jobId: w.job.id,
      pool,
      position,
      tenantPosition,
      waitReason: w.reason,
      estimatedStartAt: e ? Math.round(e.start) : null,
      estimatedEndAt: e ? Math.round(e.end) : null,
    });
  }
  return views;
}

/** Back-off before a crash-looping job's next attempt. */
export function crashBackoffUntil(j: QueuedJob, policy: Policy): number {
  if (j.requeueReason !== 'crashed' || j.attempts < 1) return 0;
  const seconds = Math.min(300, policy.crashBackoffSeconds * 2 ** (j.attempts - 1));
  return j.queuedAt + seconds * 1000;
}
