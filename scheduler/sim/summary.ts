/**
 * The figures of one run. Jobs/hour: jobs completed over the makespan (first arrival to last
 * completion); on a run cut at a horizon (saturation), job-equivalents done over the horizon
 * (completed jobs plus the steps of unfinished ones, lost steps excluded), so a run that stops
 * with work in flight is not mistaken for one that did nothing. A tenant's share over the run is
 * ∫ its dominant share dt over ∫ its entitlement dt, both from the rounds' share views, counted
 * while it had demand; Jain's index is over those ratios.
 *
 * Jobs/hour while saturated: the work done from the first arrival to the last (while work keeps
 * coming and jobs still wait, so the drain at the end, which a few long jobs decide, is left out),
 * counted in mean jobs: Σ (steps done / steps) × the job's device-time alone, over the mean job's
 * device-time. Weighting by work keeps a policy that runs small jobs first from counting more jobs
 * for the same device time.
 */
import type { SimResult } from './engine.js';
import { stepFigures } from './model.js';
import type { WorkTimeline } from './saturation.js';

export interface Summary {
  label: string;
  jobs: number;
  done: number;
  makespanHours: number;
  jobsPerHour: number;
  /** Mean jobs of work per hour over the arrival window; NaN when no job waited at its end. */
  windowJobsPerHour: number;
  /** Work done and jobs waiting over time, to compare runs while they all wait (saturation.ts). */
  timeline: WorkTimeline;
  /** The mean job's device-seconds alone, the unit of a job of work. */
  meanJobWork: number;
  utilisation: number;
  meanCompletion: number;
  p95Completion: number;
  meanQueueing: number;
  p95Queueing: number;
  tenants: { id: string; weight: number; ratio: number; share: number; entitlement: number }[];
  jain: number;
  preemptions: number;
  /** Preemption notices by reason, e.g. "reclaim 12, aging 3, compact 2". */
  preemptionReasons: string;
  takeBacks: number;
  /** Jobs noticed again less than the minimum run time after their placement. */
  earlyRepreemptions: number;
  stepsLost: number;
  switchShare: number;
  switchDeviceHours: number;
  roundP50Ms: number;
  roundP99Ms: number;
  rounds: number;
  violations: string[];
  /** Placements by plan mode, e.g. "temporal 80, spatial 40". */
  plans: string;
  /** Re-planning decisions by kind, e.g. "move 3, decline 1, measured 3". */
  replans: string;
  /**
   * Jobs' first start against the estimate the first round they waited through gave them (jobs
   * that waited after submission): how many, how many had no estimate, and of the errors (actual −
   * estimated, seconds) the median and the median and p90 of their size.
   */
  estimates: {
    waited: number;
    none: number;
    bias: number;
    p50: number;
    p90: number;
    /** By how the jobs first started (`Recorder.startedBy`): how many, and their median error (s). */
    byStart: { how: string; jobs: number; bias: number }[];
  };
  /**
   * The planner's step predictions against the steps measured (temporal placements alone on their
   * devices, after 5 steps): measured ÷ predicted, median and p10 / p90, for plans with and without
   * partial rollouts.
   */
  predictions: Record<'whole' | 'partial', { n: number; p10: number; p50: number; p90: number }>;
}

export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

export function jain(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = xs.reduce((a, b) => a + b, 0);
  const s2 = xs.reduce((a, b) => a + b * b, 0);
  return s2 > 0 ? (s * s) / (xs.length * s2) : 1;
}

export function summarise(label: string, r: SimResult): Summary {
  const done = r.jobs.filter((j) => j.status === 'done');
  const start = Math.min(...r.jobs.map((j) => j.spec.arrival));
  const span = Math.max(1e-9, r.end - start);
  const cut = r.workload.horizonSeconds !== undefined;
  const work = cut ? r.jobs.reduce((s, j) => s + j.stepsDone / j.spec.steps, 0) : done.length;
  const completion = done.map((j) => j.finishedAt! - j.spec.arrival);
  const queueing = done.map((j) => j.queuedSeconds);
  const weights = new Map(r.workload.tenants.map((t) => [t.id, t.weight]));
  const tenants = [...r.recorder.shares]
    .filter(([, s]) => s.entitlement > 0)
    .map(([id, s]) => ({
      id,
      weight: weights.get(id) ?? 1,
      ratio: s.share / s.entitlement,
      share: s.share / span,
      entitlement: s.entitlement / span,
    }))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  const minRun = r.policy.minRunSeconds;
  let early = 0;
  for (const j of r.jobs)
    for (let i = 1; i < j.preemptions.length; i++)
      if (j.preemptions[i]!.at - j.preemptions[i]!.runStartedAt < minRun) early++;
  const capacity = r.devices * span;
  const workOf = r.jobs.map((j) => j.spec.devices * j.spec.steps * stepFigures(j.spec.shape).step);
  const meanWork = workOf.reduce((a, b) => a + b, 0) / Math.max(1, workOf.length);
  const w = r.atLastArrival;
  const window = w ? w.at - start : 0;
  const windowJobsPerHour =
    w && w.queued > 0 && window > 0
      ? r.jobs.reduce((s, j, i) => s + (w.stepsDone[i]! / j.spec.steps) * workOf[i]!, 0) /
        meanWork /
        (window / 3600)
      : NaN;
  const ds = r.recorder.deviceSeconds;
  const errors: number[] = [];
  const byStart = new Map<string, number[]>();
  let none = 0;
  for (const j of r.jobs) {
    const estimate = r.recorder.firstEstimate.get(j.spec.id);
    if (estimate === undefined || j.firstPlacedAt === null) continue;
    if (estimate === null) none++;
    else {
      errors.push(j.firstPlacedAt - estimate);
      const how = r.recorder.startedBy.get(j.spec.id) ?? 'free';
      let xs = byStart.get(how);
      if (!xs) byStart.set(how, (xs = []));
      xs.push(j.firstPlacedAt - estimate);
    }
  }
  const sizes = errors.map(Math.abs);
  return {
    label,
    jobs: r.jobs.length,
    done: done.length,
    makespanHours: span / 3600,
    jobsPerHour: work / (span / 3600),
    windowJobsPerHour,
    timeline: r.recorder,
    meanJobWork: meanWork,
    utilisation: ds.useful / capacity,
    meanCompletion: mean(completion),
    p95Completion: quantile(completion, 0.95),
    meanQueueing: mean(queueing),
    p95Queueing: quantile(queueing, 0.95),
    tenants,
    jain: jain(tenants.map((t) => Math.min(1, t.ratio))),
    preemptions: r.recorder.preemptions,
    preemptionReasons:
      Object.entries(r.recorder.preemptionsByReason)
        .sort((a, b) => b[1] - a[1])
        .map(([reason, n]) => `${reason} ${n}`)
        .join(', ') || 'none',
    takeBacks: r.recorder.takeBacks,
    earlyRepreemptions: early,
    stepsLost: r.jobs.reduce((s, j) => s + j.stepsLost, 0),
    switchShare: ds.switch / capacity,
    switchDeviceHours: ds.switch / 3600,
    roundP50Ms: quantile(r.recorder.roundWallMs, 0.5),
    roundP99Ms: quantile(r.recorder.roundWallMs, 0.99),
    rounds: r.recorder.roundWallMs.length,
    violations: r.recorder.violations,
    plans: Object.entries(r.recorder.placementsByMode)
      .map(([mode, n]) => `${mode} ${n}`)
      .join(', '),
    replans:
      Object.entries(r.recorder.replans)
        .map(([kind, n]) => `${kind} ${n}`)
        .join(', ') || 'none',
    predictions: predictionFigures(r),
    estimates: {
      waited: errors.length + none,
      none,
      bias: quantile(errors, 0.5),
      p50: quantile(sizes, 0.5),
      p90: quantile(sizes, 0.9),
      byStart: [...byStart]
        .map(([how, xs]) => ({ how, jobs: xs.length, bias: quantile(xs, 0.5) }))
        .sort((a, b) => b.jobs - a.jobs || (a.how < b.how ? -1 : 1)),
    },
  };
}

function predictionFigures(r: SimResult): Summary['predictions'] {
  const ratios = { whole: [] as number[], partial: [] as number[] };
  for (const p of r.recorder.stepPredictions.values())
    if (p.alone && Number.isFinite(p.ratio)) ratios[p.partial ? 'partial' : 'whole'].push(p.ratio);
  const figures = (xs: number[]) => ({
    n: xs.length,
    p10: quantile(xs, 0.1),
    p50: quantile(xs, 0.5),
    p90: quantile(xs, 0.9),
  });
  return { whole: figures(ratios.whole), partial: figures(ratios.partial) };
}
