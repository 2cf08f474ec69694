/**
 * From the whole lock timeline: no job held devices on two nodes, or in two processes, at once;
 * no device was held by two jobs at once. A hold still open at a wipe ended with it (the wipe
 * erased it); one still open at the end ends now.
 */
import type { Hold, LockTimeline } from '../monitors/lock-timeline.js';
import type { Violations } from '../violations.js';

/** Pairs of holds in one group that overlap in time. */
function* overlapping(holds: readonly Hold[], endOf: (h: Hold) => number): Generator<[Hold, Hold]> {
  const hs = [...holds].sort((a, b) => a.start - b.start);
  for (let a = 0; a < hs.length; a++)
    for (let b = a + 1; b < hs.length && hs[b]!.start < endOf(hs[a]!); b++) yield [hs[a]!, hs[b]!];
}

function groupBy(holds: readonly Hold[], key: (h: Hold) => string): Map<string, Hold[]> {
  const out = new Map<string, Hold[]>();
  for (const h of holds) out.set(key(h), [...(out.get(key(h)) ?? []), h]);
  return out;
}

/** lastAlive: local ms each job process was last seen alive (monitors/process-sampler.ts). */
export async function checkLockExclusivity(
  v: Violations,
  timeline: LockTimeline,
  lastAlive: ReadonlyMap<number, number>,
): Promise<void> {
  await timeline.poll().catch(() => {});
  const nowMs = await timeline.redisTimeMs();
  const redisOffset = nowMs - Date.now();
  const endOf = (h: Hold) => h.end ?? timeline.wipes.find((w) => w >= h.start) ?? nowMs;
  const list = [...timeline.holds.values()];

  for (const [job, hs] of groupBy(list, (h) => h.job)) {
    for (const [x, y] of overlapping(hs, endOf)) {
      v.count();
      // A holder not seen alive by the time the overlap began was a dead job process whose
      // waiter the lock granted late: it never ran, so it is no second copy of the job.
      const overlapAt = Math.max(x.start, y.start) - redisOffset;
      const deadBefore = (h: Hold) => (lastAlive.get(h.pid) ?? 0) < overlapAt - 300;
      if (deadBefore(x) || deadBefore(y)) continue;
      if (x.node !== y.node)
        v.violate(
          'one_node_per_job',
          `job ${job}: ${x.device} [${x.start}, ${endOf(x)}) (${x.holder}, ${x.reason}) and ${y.device} [${y.start}, ${endOf(y)}) (${y.holder}, ${y.reason})`,
        );
      else if (x.holder !== y.holder)
        v.violate(
          'one_process_per_job',
          `job ${job}: ${x.device} [${x.start}, ${endOf(x)}) by ${x.holder} and ${y.device} [${y.start}, ${endOf(y)}) by ${y.holder}`,
        );
    }
  }

  for (const [device, hs] of groupBy(list, (h) => h.device)) {
    for (const [x, y] of overlapping(hs, endOf)) {
      v.count();
      if (x.job !== y.job)
        v.violate(
          'device_exclusive',
          `${device}: ${x.job} [${x.start}, ${endOf(x)}) tok ${x.token} ${x.reason} and ${y.job} [${y.start}, ${endOf(y)}) tok ${y.token}`,
        );
    }
  }
}
