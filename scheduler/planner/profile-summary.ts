/**
 * A job's profile rows as the planner reads them: the per-step summary and the per-stage figures
 * the cost model fits. The scheduler computes the same figures in SQL (rounds/read-snapshot.ts);
 * benchmarks and the simulator, which hold rows in memory, use this.
 */
import type { ProfileSummary } from '../core/types.js';
import type { StageSample } from './cost-model.js';

export interface ProfileRow {
  stage: string;
  step: number | null;
  seconds: number;
  batch: number;
  devices: number;
  peakBytes: number;
  onloadSeconds: number;
  offloadSeconds: number;
  /** Generation's slot occupancy, where the engine reported it. */
  occupancy?: number | null;
  /** Generation stopped early for partial rollouts at this share of unfinished groups (null: it did not). */
  partialTail?: number | null;
}

/** Whether a row's call stopped early for partial rollouts: such calls are a shape of their own. */
const stoppedEarly = (r: ProfileRow) => (r.partialTail ?? 0) > 0;

/** Typed arrays sort numerically without a comparator: the round computes these for every job. */
const median = (xs: ArrayLike<number>) => {
  const s = new Float64Array(xs.length);
  for (let i = 0; i < xs.length; i++) s[i] = xs[i]!;
  s.sort();
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** The stages the cost model fits (two: stageSamples keys its shapes by which one). */
export const MODELLED_STAGES = new Set(['generate', 'train']);
/**
 * A job's first profiled steps are its warm-up (first onload, allocations, caches): on this engine
 * the first two ran 1.5–2.5× its later pace (test/e2e/planner-auto.test.ts), so the cost model's
 * samples start after them.
 */
export const WARMUP_STEPS = 2;
/**
 * The cost model fits each stage shape (stage, batch, devices) from its most recent this many
 * profiled steps: an RL job's completions lengthen as it learns, and a fit over every step it ever
 * ran would follow the shift only once the shifted steps outnumbered the earlier ones. A shape the
 * job no longer runs keeps its last window, so the fit still sees more than one device count.
 */
export const PROFILE_WINDOW_STEPS = 16;
/**
 * The round reads a job's profiles of its last this many steps only (rounds/read-snapshot.ts): a
 * read of every step a long job ever ran grew with its history, 0.85 s a round at 200 running jobs
 * of 500 steps and 14 s at 1,000 of 1,000 (docs/scheduler.md). Its mean step and busy share come
 * from these steps, and a stage shape it has not run within them is no longer fitted.
 */
export const PROFILE_HISTORY_STEPS = 64;
/** Calls slower than this many times the median (a first step's cold caches, a checkpoint) are not the stage's cost. */
export const OUTLIER_FACTOR = 3;

/**
 * The mean of the values within OUTLIER_FACTOR × their median: a job's mean step is what it will
 * take, periodic evaluation included, but not a one-off stall.
 */
export function trimmedMean(xs: ArrayLike<number>): number {
  return trimmedMeanAbout(xs, median(xs));
}

function trimmedMeanAbout(xs: ArrayLike<number>, mid: number): number {
  const cut = OUTLIER_FACTOR * mid;
  let sum = 0;
  let kept = 0;
  for (let i = 0; i < xs.length; i++)
    if (xs[i]! <= cut) {
      sum += xs[i]!;
      kept++;
    }
  return kept ? sum / kept : mid;
}

const computeOf = (r: ProfileRow) => Math.max(0, r.seconds - r.onloadSeconds - r.offloadSeconds);

/**
 * `earlierSteps`: the rows are a job's recent steps only and it ran steps before them, so its
 * warm-up steps are not among them.
 */
export function stageSamples(rows: readonly ProfileRow[], earlierSteps = false): StageSample[] {
  // Grouped by shape: stage, batch, devices, and whether the call stopped early (a number for a
  // key: building a string key per row took most of the function's time).
  const groups = new Map<number, ProfileRow[]>();
  let first = -Infinity;
  if (!earlierSteps) {
    first = Infinity;
    for (const r of rows) if (r.step !== null && r.step < first) first = r.step;
  }
  for (const r of rows) {
    if (r.step === null || r.step < first + WARMUP_STEPS) continue;
    if (!MODELLED_STAGES.has(r.stage) || r.batch <= 0 || r.devices <= 0) continue;
    const key =
      ((r.batch * 65_536 + r.devices) * 2 + (stoppedEarly(r) ? 1 : 0)) * 2 + (r.stage === 'train' ? 1 : 0);
    const g = groups.get(key);
    if (g) g.push(r);
    else groups.set(key, [r]);
  }
  return [...groups.values()].map((all) => {
    // The shape's most recent PROFILE_WINDOW_STEPS distinct steps.
    const steps = new Float64Array(all.length);
    for (let i = 0; i < all.length; i++) steps[i] = all[i]!.step!;
    steps.sort();
    let from = steps[steps.length - 1]!;
    for (let i = steps.length - 1, distinct = 0; i >= 0 && distinct < PROFILE_WINDOW_STEPS; i--)
      if (i === steps.length - 1 || steps[i] !== steps[i + 1]) {
        distinct++;
        from = steps[i]!;
      }
    const g = all.filter((r) => r.step! >= from);
    const compute = new Float64Array(g.length);
    const switching = new Float64Array(g.length);
    for (let i = 0; i < g.length; i++) {
      compute[i] = computeOf(g[i]!);
      switching[i] = g[i]!.onloadSeconds + g[i]!.offloadSeconds;
    }
    const mid = median(compute);
    // Occupancy of the calls the compute mean keeps (within OUTLIER_FACTOR × the median).
    const cut = OUTLIER_FACTOR * mid;
    let occupancy = 0;
    let occupancies = 0;
    for (let i = 0; i < g.length; i++) {
      const o = g[i]!.occupancy;
      if (compute[i]! <= cut && o !== null && o !== undefined) {
        occupancy += o;
        occupancies++;
      }
    }
    return {
      stage: g[0]!.stage,
      batch: g[0]!.batch,
      devices: g[0]!.devices,
      computeSeconds: trimmedMeanAbout(compute, mid),
      switchSeconds: trimmedMean(switching),
      count: g.length,
      ...(occupancies ? { occupancy: occupancy / occupancies } : {}),
      ...(stoppedEarly(g[0]!) ? { partial: true } : {}),
    };
  });
}

/**
 * `wallSeconds`: the job's wall time from its first profiled step's start to its last's end, for
 * the mean step (holds, waits and off-device time together).
 */
export function summarize(rows: readonly ProfileRow[], wallSeconds: number): ProfileSummary | null {
  const stepRows = rows.filter((r) => r.step !== null);
  const steps = new Set(stepRows.map((r) => r.step)).size;
  if (steps === 0) return null;
  const busy = stepRows.reduce((a, r) => a + r.seconds, 0) / steps;
  return {
    stepSeconds: wallSeconds > 0 ? wallSeconds / steps : busy,
    busySeconds: busy,
    switchSeconds: stepRows.reduce((a, r) => a + r.onloadSeconds + r.offloadSeconds, 0) / steps,
    peakBytes: Math.max(0, ...stepRows.map((r) => r.peakBytes)),
    samples: steps,
    stages: stageSamples(stepRows),
  };
}
