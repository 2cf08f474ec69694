/**
 * The order in which a pool's queued jobs are considered, as a tournament between tenants
 * (Kueue's admission order, adapted): jobs past the aging bound of tenants not borrowing first
 * (oldest first); then the tenant whose weighted dominant share after admitting its head job is
 * lowest (blended with its decayed past usage); then priority; then arrival. Within a tenant: aged, priority, arrival.
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

function byQueueOrder(policy: Policy, now: number, first: ReadonlySet<string>) {
  return (a: QueuedJob, b: QueuedJob) => {
    if (first.has(a.id) !== first.has(b.id)) return first.has(a.id) ? -1 : 1;
    const aa = isAged(a, policy, now);
    const ba = isAged(b, policy, now);
    if (aa !== ba) return aa ? -1 : 1;
    if (!aa && a.priority !== b.priority) return b.priority - a.priority;
    return a.queuedAt - b.queuedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  };
}

type Key = [number, number, number, number, string];
const less = (a: Key, b: Key) => {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return false;
};

/**
 * Yields the pool's jobs in order; the caller decides each before asking for the next (a decision
 * changes its tenant's share, hence its next key).
 */
export function* admissionOrder(
  jobs: readonly QueuedJob[],
  plans: ReadonlyMap<string, JobPlan>,
  fair: FairShare,
  policy: Policy,
  now: number,
  first: ReadonlySet<string> = new Set(),
): Generator<QueuedJob> {
  const cmp = byQueueOrder(policy, now, first);
  if (!policy.fairShare) {
    yield* [...jobs].sort(cmp);
    return;
  }
  const queues = new Map<string, QueuedJob[]>();
  for (const j of jobs) {
    let q = queues.get(j.tenantId);
    if (!q) queues.set(j.tenantId, (q = []));
    q.push(j);
  }
  const heads = new Map<string, number>();
  for (const q of queues.values()) q.sort(cmp);
  const key = (tenantId: string): Key => {
    const j = queues.get(tenantId)![heads.get(tenantId) ?? 0]!;
    const p = plans.get(j.id)!;
    if (first.has(j.id)) return [-1, j.queuedAt, 0, 0, j.id];
    if (isPromoted(j, fair, policy, now)) return [0, j.queuedAt, 0, 0, j.id];
    const share =
      fair.share(tenantId, p.devicesMin, p.devicesMin * p.deviceBytes) +
      policy.usageHistoryWeight * fair.history(tenantId);
    return [1, share, -j.priority, j.queuedAt, j.id];
  };
  const heap: { t: string; k: Key }[] = [];
  const up = (i: number) => {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(heap[i]!.k, heap[p]!.k)) break;
      [heap[i], heap[p]] = [heap[p]!, heap[i]!];
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
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  };
  for (const t of queues.keys()) {
    heap.push({ t, k: key(t) });
    up(heap.length - 1);
  }
  while (heap.length > 0) {
    const top = heap[0]!;
    const q = queues.get(top.t)!;
    const i = heads.get(top.t) ?? 0;
    yield q[i]!;
    if (i + 1 < q.length) {
      heads.set(top.t, i + 1);
      top.k = key(top.t);
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
