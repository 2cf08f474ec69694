/**
 * Tables and verdicts, as Markdown (so the same text goes into docs/simulator.md). Verdicts are
 * computed from the measured figures against the targets of issue 11; nothing here is tuned to
 * pass: where Timeshare is worse than a baseline on any figure, the report lists it.
 */
import type { Ceilings } from './ceilings.js';
import { allWaiting } from './saturation.js';
import type { Summary } from './summary.js';

const h = (s: number) => (Number.isFinite(s) ? (s / 3600).toFixed(2) : '–');
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
const rate = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '–');
/** `a ÷ b` as `1.234×`, or `–` where either is undefined (no job waiting at the last arrival). */
export const times = (a: number, b: number) => (Number.isFinite(a / b) ? `${(a / b).toFixed(3)}×` : '–');

export function table(rows: Summary[]): string {
  const head =
    '| policy | done | makespan h | jobs/h | jobs/h arrival window | util | JCT mean / p95 h | queue mean / p95 h | min share/entitled | Jain | preempt (taken back) | switch time | lost steps | round p50 / p99 ms |';
  const sep = `|${'---|'.repeat(14)}`;
  const lines = rows.map((r) => {
    const worst = r.tenants.reduce((m, t) => Math.min(m, t.ratio), Infinity);
    return `| ${r.label} | ${r.done}/${r.jobs} | ${r.makespanHours.toFixed(2)} | ${r.jobsPerHour.toFixed(2)} | ${rate(r.windowJobsPerHour)} | ${pct(r.utilisation)} | ${h(r.meanCompletion)} / ${h(r.p95Completion)} | ${h(r.meanQueueing)} / ${h(r.p95Queueing)} | ${worst.toFixed(2)} | ${r.jain.toFixed(3)} | ${r.preemptions} (${r.takeBacks}) | ${pct(r.switchShare)} (${r.switchDeviceHours.toFixed(1)} dev-h) | ${r.stepsLost} | ${r.roundP50Ms.toFixed(2)} / ${r.roundP99Ms.toFixed(2)} |`;
  });
  return [head, sep, ...lines].join('\n');
}

export function tenantTable(rows: Summary[]): string {
  const ids = [...new Set(rows.flatMap((r) => r.tenants.map((t) => t.id)))].sort();
  const head = `| tenant (weight) | ${rows.map((r) => `${r.label}: share / entitled`).join(' | ')} |`;
  const sep = `|${'---|'.repeat(rows.length + 1)}`;
  const lines = ids.map((id) => {
    const w = rows.flatMap((r) => r.tenants).find((t) => t.id === id)?.weight ?? 1;
    const cells = rows.map((r) => {
      const t = r.tenants.find((x) => x.id === id);
      return t ? `${pct(t.share)} / ${pct(t.entitlement)} (${t.ratio.toFixed(2)})` : '–';
    });
    return `| ${id} (${w}) | ${cells.join(' | ')} |`;
  });
  return [head, sep, ...lines].join('\n');
}

/**
 * What a tenant is told right after submitting: the estimated start the first round it waited
 * through gave each job, against the job's actual first start.
 */
export function estimateTable(rows: Summary[]): string {
  const h = (seconds: number) => (Number.isFinite(seconds) ? (seconds / 3600).toFixed(2) : '–');
  const lines = rows.map((r) => {
    const e = r.estimates;
    const how = e.byStart.map((b) => `${b.how} ${b.jobs} (${h(b.bias)})`).join(', ');
    return `| ${r.label} | ${e.waited} | ${e.none} | ${h(e.bias)} | ${h(e.p50)} / ${h(e.p90)} | ${how} |`;
  });
  return [
    '| policy | jobs that waited | without an estimate | median error h (actual − estimated start) | median / p90 size of the error h | how they started: jobs (median error h) |',
    '|---|---|---|---|---|---|',
    ...lines,
  ].join('\n');
}

/** The planner's step predictions against measured steps, one line (Timeshare with the planner). */
export function predictionLine(r: Summary): string {
  const part = (label: string, f: Summary['predictions']['whole']) =>
    f.n === 0
      ? `${label}: none`
      : `${label} ${f.p50.toFixed(3)} (p10 ${f.p10.toFixed(3)}, p90 ${f.p90.toFixed(3)}; ${f.n} placements)`;
  return `The planner's predicted step against the measured one (measured ÷ predicted, median; temporal placements alone on their devices, after 5 steps): ${part('whole calls', r.predictions.whole)}; ${part('partial rollouts', r.predictions.partial)}.`;
}

export interface PhysicsRow {
  idle: number;
  fifo: Summary;
  timeshare: Summary;
}

/** Ideal gain 1/(1 − f), less the share of device time Timeshare spent switching. */
export function physicsVerdicts(rows: PhysicsRow[]): { text: string; pass: boolean } {
  let pass = true;
  const lines = rows.map(({ idle, fifo, timeshare }) => {
    const measured = timeshare.jobsPerHour / fifo.jobsPerHour;
    const switches = Math.max(0, timeshare.switchShare - fifo.switchShare);
    const ideal = 1 / (1 - idle);
    const net = ideal * (1 - switches);
    const ok = idle === 0 ? measured >= Math.max(0.97, 1 - switches) - 1e-9 : measured >= 0.85 * net;
    pass &&= ok;
    const target =
      idle === 0 ? `≥ ${Math.max(0.97, 1 - switches).toFixed(3)}` : `≥ ${(0.85 * net).toFixed(3)}`;
    return `| ${pct(idle)} | ${fifo.jobsPerHour.toFixed(2)} | ${timeshare.jobsPerHour.toFixed(2)} | ${measured.toFixed(3)} | ${ideal.toFixed(3)} | ${pct(switches)} | ${net.toFixed(3)} | ${(measured / net).toFixed(3)} | ${target} | ${verdict(ok)} |`;
  });
  const head =
    '| idle f | FIFO jobs/h | Timeshare jobs/h | measured × | ideal 1/(1−f) | switch share | ideal less switches | measured / ideal | target | verdict |';
  return { text: [head, `|${'---|'.repeat(10)}`, ...lines].join('\n'), pass };
}

/** Each policy's jobs/h while every policy had jobs waiting, and for how long. */
export function saturationLine(rows: Summary[], sat: { jobsPerHour: number[]; hours: number }): string {
  const each = rows.map((r, i) => `${r.label} ${rate(sat.jobsPerHour[i]!)}`).join(', ');
  const own = rows.map((r) => `${r.label} ${(waitingSeconds(r) / 3600).toFixed(1)} h`).join(', ');
  return `Jobs/h while saturated, counted only while every policy had a job waiting (${sat.hours.toFixed(1)} h): ${each}. Hours with a job waiting, each policy alone: ${own}.`;
}

function waitingSeconds(r: Summary): number {
  return allWaiting([r.timeline]).reduce((s, [from, to]) => s + (to - from), 0);
}

export function headlineVerdicts(
  fifo: Summary,
  kueue: Summary,
  ts: Summary,
  saturated: { fifo: number; kueue: number; hours: number },
): { text: string; pass: boolean } {
  const checks: [string, boolean, string][] = [];
  const add = (name: string, ok: boolean, detail: string) => checks.push([name, ok, detail]);
  // Under saturation: while every policy has jobs waiting (saturation.ts). NaN (they never all
  // waited: not saturated) fails.
  const over = `over ${saturated.hours.toFixed(1)} h`;
  add(
    'jobs/h while saturated ≥ 1.5× exclusive FIFO',
    saturated.fifo >= 1.5,
    `${saturated.fifo.toFixed(3)}× (${over})`,
  );
  add(
    'jobs/h while saturated ≥ 1.2× Kueue-like',
    saturated.kueue >= 1.2,
    `${saturated.kueue.toFixed(3)}× (${over})`,
  );
  add(
    'mean completion below both',
    ts.meanCompletion < fifo.meanCompletion && ts.meanCompletion < kueue.meanCompletion,
    `${h(ts.meanCompletion)} h vs ${h(fifo.meanCompletion)} / ${h(kueue.meanCompletion)}`,
  );
  add(
    'p95 completion below both',
    ts.p95Completion < fifo.p95Completion && ts.p95Completion < kueue.p95Completion,
    `${h(ts.p95Completion)} h vs ${h(fifo.p95Completion)} / ${h(kueue.p95Completion)}`,
  );
  const worst = ts.tenants.reduce((m, t) => (t.ratio < m.ratio ? t : m), { id: '–', ratio: Infinity });
  add(
    'every tenant ≥ 90% of its entitled share',
    worst.ratio >= 0.9,
    `lowest ${worst.id} ${worst.ratio.toFixed(2)}`,
  );
  add(
    'no job preempted twice within its minimum run time',
    ts.earlyRepreemptions === 0 && ts.violations.length === 0,
    `${ts.earlyRepreemptions} early, ${ts.violations.length} violations`,
  );
  const lines = checks.map(([n, ok, d]) => `| ${n} | ${d} | ${verdict(ok)} |`);
  // Over the makespan the drain at the end counts too, where a few long jobs run on a pool that
  // empties: shown beside the verdicts, not one of them.
  const whole = (b: Summary) => times(ts.jobsPerHour, b.jobsPerHour);
  // The arrival window holds stretches in which nobody waits, where every policy runs what arrived.
  const window = (b: Summary) => times(ts.windowJobsPerHour, b.windowJobsPerHour);
  lines.push(
    `| for information: jobs/h over the arrival window (first arrival to last, stretches with no job waiting included), against FIFO / Kueue-like | ${window(fifo)} / ${window(kueue)} | – |`,
  );
  lines.push(
    `| for information: jobs/h over the makespan (drain included), against FIFO / Kueue-like | ${whole(fifo)} / ${whole(kueue)} | – |`,
  );
  return {
    text: ['| target | measured | verdict |', '|---|---|---|', ...lines].join('\n'),
    pass: checks.every((c) => c[1]),
  };
}

/** Every figure on which Timeshare does worse than a baseline. */
export function losses(ts: Summary, baselines: Summary[]): string[] {
  const out: string[] = [];
  for (const b of baselines) {
    const worse = (
      name: string,
      mine: number,
      theirs: number,
      higherIsBetter: boolean,
      fmt: (x: number) => string,
    ) => {
      if (higherIsBetter ? mine < theirs - 1e-9 : mine > theirs + 1e-9)
        out.push(`Timeshare loses to ${b.label} on ${name}: ${fmt(mine)} vs ${fmt(theirs)}`);
    };
    worse('jobs/hour', ts.jobsPerHour, b.jobsPerHour, true, (x) => x.toFixed(2));
    worse('jobs/hour over the arrival window', ts.windowJobsPerHour, b.windowJobsPerHour, true, rate);
    worse('utilisation', ts.utilisation, b.utilisation, true, pct);
    worse('makespan', ts.makespanHours, b.makespanHours, false, (x) => `${x.toFixed(2)} h`);
    worse('mean completion', ts.meanCompletion, b.meanCompletion, false, (x) => `${h(x)} h`);
    worse('p95 completion', ts.p95Completion, b.p95Completion, false, (x) => `${h(x)} h`);
    worse('mean queueing', ts.meanQueueing, b.meanQueueing, false, (x) => `${h(x)} h`);
    worse('p95 queueing', ts.p95Queueing, b.p95Queueing, false, (x) => `${h(x)} h`);
    worse("Jain's index", ts.jain, b.jain, true, (x) => x.toFixed(3));
    worse('preemptions', ts.preemptions, b.preemptions, false, String);
    worse('time lost to switches', ts.switchShare, b.switchShare, false, pct);
    worse('round p99', ts.roundP99Ms, b.roundP99Ms, false, (x) => `${x.toFixed(2)} ms`);
  }
  return out;
}

/** Student's t at 97.5% for 1–30 degrees of freedom (the standard table); 1.96 beyond. */
const T975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131,
  2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/** The 95% confidence interval of the mean of a few seeds' figures, or null for fewer than two. */
export function meanInterval(xs: readonly number[]): [number, number] | null {
  const n = xs.length;
  if (n < 2) return null;
  const m = xs.reduce((a, b) => a + b, 0) / n;
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (n - 1));
  const half = (T975[n - 2] ?? 1.96) * (sd / Math.sqrt(n));
  return [m - half, m + half];
}

/**
 * A workload's ceilings beside what the run measured (ceilings.ts): how much of what cutting the
 * tails and filling idle time could give the planner and Timeshare reached.
 */
export function ceilingLine(c: Ceilings, plannerGain: number, overFifo: number): string {
  const reached = (measured: number, ceiling: number) =>
    ceiling > 1 && Number.isFinite(measured)
      ? ` (${pct((measured - 1) / (ceiling - 1))} of that gain reached)`
      : '';
  return (
    `Ceilings of this workload, from its jobs' step shapes (device-time weighted, every device busy, switches excluded; ceilings.ts): ` +
    `its jobs are idle ${pct(c.idleShare)} of a step, and generation's tail is ${pct(c.tailShare)} of their held time. ` +
    `Partial rollouts of the jobs that allow weight lag recover ${pct(c.carriedShare)} of the held time: the planner over temporal-only at most ${c.carry.toFixed(3)}×, measured ${times(plannerGain, 1)}${reached(plannerGain, c.carry)}; ` +
    `${c.carryAll.toFixed(3)}× if every job's tail could be cut. ` +
    `Filling every idle second as well: ${c.fillAndCarry.toFixed(3)}× a packer that leaves no device idle; exclusive FIFO also leaves devices idle behind its head, so Timeshare's ${times(overFifo, 1)} FIFO is not bounded by it.`
  );
}

/** The ceilings `acrossSeeds` prints beside the measured ratios, in the order of `CEILING_NAMES`. */
export function ceilingRatios(c: Ceilings): number[] {
  return [c.carry, c.carryAll, c.fillAndCarry];
}

export const CEILING_NAMES = [
  "ceiling: the planner's partial rollouts over temporal-only (jobs that allow weight lag; every device busy)",
  "ceiling: the same with every job's tail cut (on-policy jobs included)",
  'ceiling: idle time filled and those tails cut, over a packer that leaves no device idle',
];
