/**
 * Queue positions and estimated start times for one pool. The estimate replays the queue in order
 * on the pool's devices: each device is free when the jobs on it now are predicted to finish (their
 * remaining steps × predicted step time; a job under preemption notice within its grace period),
 * and each queued job takes the devices that free up first for its predicted run. Under
 * time-sharing a queued job may instead join a job alone on devices of its width whose load admits
 * it (a whole group, as the round joins them): a running job, from now or from when its partner
 * ends, or a job the replay started alone before it. It joins only if it is predicted to finish
 * there (slowed by the pair's load) before its host ends, so the devices a host frees are never
 * promised twice. Lent devices are not foreseen, so this errs late; a job wider than the pool gets
 * null.
 */
import { FreeTimes } from './free-times.js';
import { pairAdmits, switchFraction } from './cluster.js';
import { remainingSeconds } from '../planner/plan-job.js';
import type { JobPlan, Policy, QueueEntryView, QueuedJob, WaitReason } from './types.js';

export interface Waiting {
  job: QueuedJob;
  plan: JobPlan;
  reason: WaitReason;
  /** Earliest time it may start regardless of capacity (crash back-off), or 0. */
  notBefore: number;
}

/** A job alone on its devices (from `from`) that another job of its width may join until it ends. */
export interface JoinHost {
  width: number;
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

/** Openings are kept by their host's load in steps of this much, so a search skips the too busy. */
const LOAD_STEP = 0.1;
/**
 * Openings a search takes from one load class, earliest first: a bound on its work. 2 gave the
 * simulator's seed 1 the same estimates as 4, and bench:scheduler's 10,000-job estimate took 6.5
 * ms against 7.9 ms (2.2 ms without joins).
 */
const JOIN_SCAN = 2;

interface Opening {
  host: JoinHost;
  /** From when the estimate has nobody else joined to it (ms). */
  from: number;
}

/** Openings per width and load class, each class a min-heap by `from`. */
class Openings {
  private readonly byWidth = new Map<number, Opening[][]>();
  private readonly looked: Opening[] = [];

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
   * Takes the earliest opening of `width` whose host admits `plan` and outlives its run (slowed by
   * the pair's load), starting no later than `latest`, until that run ends; returns when it starts
   * and ends, or null, leaving every opening as it was.
   */
  join(width: number, plan: JobPlan, seconds: number, notBefore: number, latest: number) {
    const classes = this.byWidth.get(width);
    if (!classes) return null;
    const own = loadOf(plan);
    // Classes whose every host is too busy for this job under the load rule are not looked at.
    const top = Math.min(classes.length - 1, Math.floor((this.policy.maxGroupLoad - own) / LOAD_STEP + 1e-9));
    const looked = this.looked;
    let best: { o: Opening; start: number; end: number } | null = null;
    for (let c = 0; c <= top; c++) {
      const h = classes[c]!;
      // The class's earliest opening starts too late: nothing in it does better (no heap work).
      if (h.length === 0) continue;
      const first = Math.max(h[0]!.from, notBefore);
      if (first > latest || (best && first >= best.start)) continue;
      looked.length = 0;
      while (h.length > 0 && looked.length < JOIN_SCAN) {
        const o = this.pop(h);
        looked.push(o);
        const start = Math.max(o.from, notBefore);
        if (start > latest || (best && start >= best.start)) break;
        if (!pairAdmits(this.policy, o.host.plan, plan)) continue;
        const load = loadOf(o.host.plan) + own;
        const end = start + seconds * 1000 * Math.max(1, load);
        if (end > o.host.end) continue;
        if (best) this.add(best.o);
        best = { o, start, end };
        looked.pop();
        break;
      }
      for (const o of looked) this.add(o);
    }
    if (!best) return null;
    // Taken until the joiner ends, and open again from then.
    best.o.from = best.end;
    this.add(best.o);
    return { start: best.start, end: best.end };
  }
}

export function estimateQueue(
  pool: string,
  deviceFreeAt: number[],
  waiting: readonly Waiting[],
  now: number,
  join?: JoinRule,
): QueueEntryView[] {
  const openings = join ? new Openings(join.hosts, now, join.policy) : null;
  // The lightest queued job (busy + switch share): a job started in the replay becomes an opening
  // only if that one could join it, so a queue nobody can pair in costs the replay nothing more.
  let lightest = Infinity;
  if (join) for (const w of waiting) lightest = Math.min(lightest, loadOf(w.plan));
  const roomFor = join ? join.policy.maxGroupLoad - lightest : -Infinity;
  const free = new FreeTimes();
  const byTime = new Map<number, number>();
  for (const t of deviceFreeAt) {
    const at = Math.max(now, t);
    byTime.set(at, (byTime.get(at) ?? 0) + 1);
  }
  for (const [at, n] of byTime) free.add(at, n);
  const views: QueueEntryView[] = [];
  const perTenant = new Map<string, number>();
  const scratch: [number, number][] = [];
  let position = 0;
  for (const w of waiting) {
    position++;
    const tenantPosition = (perTenant.get(w.job.tenantId) ?? 0) + 1;
    perTenant.set(w.job.tenantId, tenantPosition);
    const need = w.plan.devicesMin;
    let estimatedStartAt: number | null = null;
    if (need <= free.size && w.reason !== 'quota') {
      const seconds = remainingSeconds(w.plan, w.job.workload.steps, w.job.stepsDone);
      const notBefore = Math.max(now, w.notBefore);
      // Its own devices first; a join that starts no later wins, and they are given back.
      scratch.length = 0;
      const start = Math.max(notBefore, free.take(need, openings ? scratch : undefined));
      const joined = openings?.join(need, w.plan, seconds, notBefore, start) ?? null;
      if (joined) {
        for (const [at, n] of scratch) free.add(at, n);
        estimatedStartAt = Math.round(joined.start);
      } else {
        const end = start + seconds * 1000;
        free.add(end, need);
        // Once started alone, a job later in the queue may join it.
        if (openings && loadOf(w.plan) <= roomFor)
          openings.add({ host: { width: need, plan: w.plan, from: start, end }, from: start });
        estimatedStartAt = Math.round(start);
      }
    }
    views.push({ jobId: w.job.id, pool, position, tenantPosition, waitReason: w.reason, estimatedStartAt });
  }
  return views;
}

/** Back-off before a crash-looping job's next attempt. */
export function crashBackoffUntil(j: QueuedJob, policy: Policy): number {
  if (j.requeueReason !== 'crashed' || j.attempts < 1) return 0;
  const seconds = Math.min(300, policy.crashBackoffSeconds * 2 ** (j.attempts - 1));
  return j.queuedAt + seconds * 1000;
}
