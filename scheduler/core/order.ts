/**
 * The order in which a pool's queued jobs are considered, as a tournament between tenants
 * (Kueue's admission order, adapted): jobs past the aging bound of tenants not borrowing first
 * (oldest first); then jobs whose admission keeps their tenant within its entitlement before jobs
 * that would make it borrow (Kueue's "under nominal quota first"); within each, the tenant whose
 * weighted dominant share after admitting its head job is lowest (blended with its decayed past
 * usage); then priority; then arrival. Within a tenant: aged, priority, arrival.
 * Without fair share: one queue by aged, priority, arrival (FIFO). Before all of them, in either case,
 * the jobs that devices are being freed for (`first`): a preemption or a compaction made room for
 * them, and a job ahead in the order taking that room would only make them preempt again.
 *
 * Only the picked tenant's key changes when its job is decided, so a heap of tenants keeps a round
 * at O(jobs · log tenants).
 */
import type { FairShare } from './fair-share.js';
import type { JobPlan, Policy, QueuedJob } from './types.js';

export const isAged = (j: QueuedJob, policy: Policy, now: number) =>
  now - j.queuedAt >= policy.agingBoundSeconds * 1000;

/**
 * Whether a job goes ahead of the pool's fair-share order: past the aging bound, and its tenant not
 * borrowing (holding no more than its entitlement). A borrowing tenant's job waits on that tenant's
 * own usage, not on anyone's unfairness; promoting it anyway put over-share tenants' aged jobs
 * ahead of a tenant at a fifth of its entitlement (docs/simulator.md, finding 5). Within a tenant,
 * age still goes before priority.
 */
export const isPromoted = (j: QueuedJob, fair: FairShare, policy: Policy, now: number) =>
  isAged(j, policy, now) && (!policy.fairShare || !fair.borrowing(j.tenantId));

/** A job's queue-order flags, worked out once: a sort compares each job many times. */
interface Ranked {
  job: QueuedJob;
  first: boolean;
  aged: boolean;
}

function byQueueOrder(a: Ranked, b: Ranked): number {
  if (a.first !== b.first) return a.first ? -1 : 1;
  if (a.aged !== b.aged) return a.aged ? -1 : 1;
  const x = a.job;
  const y = b.job;
  if (!a.aged && x.priority !== y.priority) return y.priority - x.priority;
  return x.queuedAt - y.queuedAt || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
}

function sorted(jobs: readonly QueuedJob[], policy: Policy, now: number, first: ReadonlySet<string>) {
  return jobs
    .map((job) => ({ job, first: first.has(job.id), aged: isAged(job, policy, now) }))
    .sort(byQueueOrder)
    .map((r) => r.job);
}

/**
 * A tenant's place in the tournament, from its head job: class (−1 devices freed for it, 0 promoted
 * by age, 1 by share within its entitlement, 2 by share borrowing), then its share after admission
 * (for classes −1 and 0, its arrival), priority
 * (negated), arrival and id. Updated in place as the head changes.
 */
interface Key {
  cls: number;
  share: number;
  priority: number;
  queuedAt: number;
  id: string;
}
const less = (a: Key, b: Key) =>
  a.cls !== b.cls
    ? a.cls < b.cls
    : a.share !== b.share
      ? a.share < b.share
      : a.priority !== b.priority
        ? a.priority < b.priority
        : a.queuedAt !== b.queuedAt
          ? a.queuedAt < b.queuedAt
          : a.id < b.id;

/**
 * Yields the pool's jobs in order; the caller decides each before asking for the next (a decision
 * changes its tenant's share, hence its next key).
 */
export function* admissionOrder(
  jobs: readonly QueuedJob[],
  plans: ReadonlyMap<QueuedJob, JobPlan>,
  fair: FairShare,
  policy: Policy,
  now: number,
  first: ReadonlySet<string> = new Set(),
): Generator<QueuedJob> {
  if (!policy.fairShare) {
    yield* sorted(jobs, policy, now, first);
    return;
  }
  const queues = new Map<string, QueuedJob[]>();
  for (const j of jobs) {
    let q = queues.get(j.tenantId);
    if (!q) queues.set(j.tenantId, (q = []));
    q.push(j);
  }
  const heads = new Map<string, number>();
  for (const [t, q] of queues) queues.set(t, sorted(q, policy, now, first));
  const key = (tenantId: string, k: Key): Key => {
    const j = queues.get(tenantId)![heads.get(tenantId) ?? 0]!;
    k.id = j.id;
    if (first.has(j.id) || isPromoted(j, fair, policy, now)) {
      k.cls = first.has(j.id) ? -1 : 0;
      k.share = j.queuedAt;
      k.priority = 0;
      k.queuedAt = 0;
      return k;
    }
    const p = plans.get(j)!;
    // The past-usage blend may rank a tenant that would borrow ahead of one within its entitlement;
    // the reclaim rule, which judges current shares only, then took the device back from the first
    // in the same round (a place and a preemption for one freed device). A borrower goes after.
    k.cls = fair.borrowing(tenantId, p.devicesMin, p.devicesMin * p.deviceBytes) ? 2 : 1;
    k.share =
      fair.share(tenantId, p.devicesMin, p.devicesMin * p.deviceBytes) +
      policy.usageHistoryWeight * fair.history(tenantId);
    k.priority = -j.priority;
    k.queuedAt = j.queuedAt;
    return k;
  };
  const heap: { t: string; k: Key }[] = [];
  const up = (i: number) => {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(heap[i]!.k, heap[p]!.k)) break;
      const t = heap[i]!;
      heap[i] = heap[p]!;
      heap[p] = t;
      i = p;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && less(heap[l]!.k, heap[m]!.k)) m = l;
      if (r < heap.length && less(heap[r]!.k, heap[m]!.k)) m = r;
      if (m === i) return;
      const t = heap[i]!;
      heap[i] = heap[m]!;
      heap[m] = t;
      i = m;
    }
  };
  for (const t of queues.keys()) {
    heap.push({ t, k: key(t, { cls: 0, share: 0, priority: 0, queuedAt: 0, id: '' }) });
    up(heap.length - 1);
  }
  while (heap.length > 0) {
    const top = heap[0]!;
    const q = queues.get(top.t)!;
    const i = heads.get(top.t) ?? 0;
    yield q[i]!;
    if (i + 1 < q.length) {
      heads.set(top.t, i + 1);
      key(top.t, top.k);
      down(0);
    } else {
      const last = heap.pop()!;
      if (heap.length > 0) {
        heap[0] = last;
        down(0);
      }
    }
  }
}
