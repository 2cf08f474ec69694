/**
 * Jobs/hour under saturation, compared on the same stretches of simulated time: only while every
 * compared run has a job waiting in its queue, so that each is doing all the work it can and none
 * is held back by what has arrived. A window fixed by the arrivals is not enough: on the default
 * workloads whole hours pass with no job waiting under any policy (arrivals come in bursts), every
 * policy then runs exactly what arrived, and those hours pull every ratio towards 1 whatever each
 * policy could do.
 */

/** What a run records for this: its work done as it changes, and whether jobs wait, as it changes. */
export interface WorkTimeline {
  /** At `progressAt[i]`, the net work done so far, `progress[i]` (device-seconds alone). */
  progressAt: readonly number[];
  progress: readonly number[];
  /** From `waitingAt[i]` until the next change, whether a job waited: `waiting[i]`. */
  waitingAt: readonly number[];
  waiting: readonly boolean[];
}

/** The stretches [from, to) during which every timeline has a job waiting. */
export function allWaiting(runs: readonly WorkTimeline[]): [number, number][] {
  const times = [...new Set(runs.flatMap((r) => r.waitingAt))].sort((a, b) => a - b);
  const stretches: [number, number][] = [];
  for (let i = 0; i + 1 < times.length; i++) {
    const [from, to] = [times[i]!, times[i + 1]!];
    if (!runs.every((r) => valueAt(r.waitingAt, r.waiting, from, false))) continue;
    const last = stretches[stretches.length - 1];
    if (last && last[1] === from) last[1] = to;
    else stretches.push([from, to]);
  }
  return stretches;
}

/**
 * Each run's jobs/hour (work over `meanJobWork`, the mean job's device-seconds alone) over the time
 * every run had a job waiting, and that time in hours. NaN rates when they never all waited.
 */
export function whileAllWait(
  runs: readonly WorkTimeline[],
  meanJobWork: number,
): { jobsPerHour: number[]; hours: number } {
  const stretches = allWaiting(runs);
  const seconds = stretches.reduce((s, [a, b]) => s + (b - a), 0);
  const jobsPerHour = runs.map((r) => {
    if (seconds <= 0) return NaN;
    const work = stretches.reduce(
      (s, [a, b]) => s + valueAt(r.progressAt, r.progress, b, 0) - valueAt(r.progressAt, r.progress, a, 0),
      0,
    );
    return work / meanJobWork / (seconds / 3600);
  });
  return { jobsPerHour, hours: seconds / 3600 };
}

/** A step function's value at t: the last value set at or before t, `before` ahead of the first. */
function valueAt<T>(at: readonly number[], values: readonly T[], t: number, before: T): T {
  let lo = 0;
  let hi = at.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (at[mid]! <= t) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found < 0 ? before : values[found]!;
}

/** `whileAllWait` over runs of one workload, each with its timeline and the workload's mean job. */
export function saturated(runs: readonly { timeline: WorkTimeline; meanJobWork: number }[]): {
  jobsPerHour: number[];
  hours: number;
} {
  return whileAllWait(
    runs.map((r) => r.timeline),
    runs[0]?.meanJobWork ?? 1,
  );
}
