/**
 * `npm run sim`: the physics check, then the headline comparison on the synthetic workload and the
 * Philly replay (and on a workload file when given), all seeded. Flags:
 *   --seed N            workload and step draws (default 1)
 *   --workload FILE     a JSON or CSV workload (see workloads/file.ts); adds the part `file`
 *   --parts a,b         any of physics, synthetic, philly, scale, file (default: all that apply)
 *   --trace PATH        the Philly CSV (default ../shared/traces/philly.csv)
 *   --philly-jobs N     jobs in the replayed window (default 160)
 *   --tick S            seconds between rounds while jobs wait (default 30)
 *   --seeds N           also run seeds seed … seed+N−1 of each workload and print the ratios'
 *                       mean and range (default 5; 1: the one seed only)
 *   --mtbf H            mean hours between failures of a node in the part `failures` (default 6)
 *   --with a,b          Timeshare's rules that are off by default, turned on for its rows:
 *                       protectOwnerDevices, spreadWhenIdle
 *   --without a,b       Timeshare's rules that are on by default, turned off: compactIntoGroups,
 *                       reclaimCompaction
 *   --help              these flags
 * Exits 0 whatever the verdicts: they are findings, printed, not a build gate.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { defaultPolicy, exclusiveFifoPolicy, kueueLikePolicy } from '../core/policy.js';
import type { Policy } from '../core/types.js';
import { PRIOR_IDLE_FRACTION } from '../planner/plan-job.js';
import { simulate } from './engine.js';
import { defaultPhysics, type SimPhysics, type SimWorkload } from './model.js';
import { workloadCeilings } from './ceilings.js';
import {
  CEILING_NAMES,
  ceilingLine,
  ceilingRatios,
  estimateTable,
  headlineVerdicts,
  losses,
  meanInterval,
  physicsVerdicts,
  predictionLine,
  saturationLine,
  table,
  tenantTable,
  times,
  type PhysicsRow,
} from './report.js';
import { saturated } from './saturation.js';
import { summarise, type Summary } from './summary.js';
import { fileWorkload } from './workloads/file.js';
import { PHILLY_PATH, phillyWorkload } from './workloads/philly.js';
import { physicsWorkload } from './workloads/physics.js';
import { syntheticWorkload } from './workloads/synthetic.js';

/** The flags, or a one-line complaint and exit 2 on one it does not know. */
function parseFlags<const T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (e) {
    console.error(`npm run sim: ${(e as Error).message} (--help lists the flags)`);
    process.exit(2);
  }
}
const { values } = parseFlags({
  options: {
    seed: { type: 'string', default: '1' },
    workload: { type: 'string' },
    parts: { type: 'string' },
    trace: { type: 'string' },
    'philly-jobs': { type: 'string', default: '160' },
    tick: { type: 'string', default: String(defaultPhysics.tickSeconds) },
    seeds: { type: 'string', default: '5' },
    with: { type: 'string', default: '' },
    without: { type: 'string', default: '' },
    mtbf: { type: 'string', default: '6' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  // The flags are documented once, in this file's header.
  const source = readFileSync(fileURLToPath(import.meta.url), 'utf8');
  const header = source.slice(source.indexOf('/**') + 3, source.indexOf('*/'));
  console.log(header.replace(/^ \* ?/gm, '').trim());
  process.exit(0);
}
/** Rules a flag turns on or off: each as the policy fields it sets, on and off. */
const OPTIONAL_RULES: Record<string, { on: Partial<Policy>; off: Partial<Policy> }> = {
  protectOwnerDevices: { on: { protectOwnerDevices: true }, off: { protectOwnerDevices: false } },
  compactIntoGroups: { on: { compactIntoGroups: true }, off: { compactIntoGroups: false } },
  spreadWhenIdle: { on: { spreadWhenIdle: true }, off: { spreadWhenIdle: false } },
  reclaimCompaction: {
    on: { reclaimCompactionAfterSeconds: 900 },
    off: { reclaimCompactionAfterSeconds: null },
  },
};
const isOn = (fields: Partial<Policy>) =>
  Object.entries(fields).every(([k, v]) => defaultPolicy[k as keyof Policy] === v);
let switched: Partial<Policy> = {};
const turn = (flag: 'with' | 'without', on: boolean) => {
  for (const name of values[flag].split(',').filter(Boolean)) {
    const known = Object.keys(OPTIONAL_RULES).filter((r) => isOn(OPTIONAL_RULES[r]!.on) !== on);
    if (!known.includes(name))
      throw new Error(`--${flag}: unknown rule ${name} (one of ${known.join(', ')})`);
    switched = { ...switched, ...OPTIONAL_RULES[name]![on ? 'on' : 'off'] };
  }
};
turn('with', true);
turn('without', false);
const timeshare: Policy = { ...defaultPolicy, ...switched };
const seed = Number(values.seed);
const seeds = Math.max(1, Math.floor(Number(values.seeds)));
const physics: SimPhysics = { ...defaultPhysics, tickSeconds: Number(values.tick) };
const parts = new Set(
  (values.parts ?? `physics,synthetic,philly,scale,failures${values.workload ? ',file' : ''}`)
    .split(',')
    .map((s) => s.trim()),
);
/** Label, policy, and whether jobs ask for `auto` (the stage planner) rather than `temporal`. */
const POLICIES: [string, Policy, boolean][] = [
  ['exclusive FIFO', exclusiveFifoPolicy, false],
  ['Kueue-like', kueueLikePolicy, false],
  ['Timeshare, temporal only', timeshare, false],
  ['Timeshare', timeshare, true],
];
const out = (s = '') => console.log(s);
const run = (label: string, w: SimWorkload, p: Policy, planner = false, s = seed) =>
  summarise(label, simulate(w, p, { physics, seed: s, planner }));

out(`# Timeshare cluster simulator (seed ${seed})`);
if (values.with) out(`\nTimeshare with rules that are off by default turned on: ${values.with}.`);
if (values.without) out(`\nTimeshare with rules that are on by default turned off: ${values.without}.`);
out();
out(
  `Switch ${physics.switchBytesPerSecond / 1e9} GB/s each way (bench:engine offload/onload), checkpoint ${physics.checkpointBytesPerSecond / 1e9} GB/s per device, decision cost ${physics.decisionSecondsPerJob} s per decided job, rounds on events and every ${physics.tickSeconds} s while jobs wait, usage half-life ${physics.usageHalfLifeSeconds / 3600} h.`,
);

if (parts.has('physics')) {
  out();
  out('## Physics check (saturation, one-device jobs idle f of each step, 16 devices, 6 h)');
  out();
  const rows: PhysicsRow[] = [0, 0.1, 0.3, 0.5].map((idle) => {
    const w = physicsWorkload(idle);
    return {
      idle,
      fifo: run('exclusive FIFO', w, exclusiveFifoPolicy),
      timeshare: run('Timeshare', w, timeshare),
    };
  });
  const v = physicsVerdicts(rows);
  out(v.text);
  out();
  out(`Physics check: ${v.pass ? 'PASS' : 'FAIL'}`);
  const cold = physicsWorkload(0.3, { recurring: false });
  const ratio =
    run('Timeshare', cold, timeshare).jobsPerHour /
    run('exclusive FIFO', cold, exclusiveFifoPolicy).jobsPerHour;
  // Two new jobs on the planner's prior want 2 × (1 − idle) of a device: they pair only while the
  // group-load bound admits that.
  const priorLoad = 2 * (1 - PRIOR_IDLE_FRACTION);
  const prior =
    priorLoad <= defaultPolicy.maxGroupLoad
      ? 'two of them fit one device'
      : 'a new job looks too busy to share a device';
  out(
    `Cold start, for information: the same f = 30% jobs submitted without profiles give ${ratio.toFixed(3)}× (the planner's prior assumes ${PRIOR_IDLE_FRACTION * 100}% idle, and at a group-load bound of ${defaultPolicy.maxGroupLoad} ${prior}).`,
  );
}

/** Each headline workload's rows (seed 1, `POLICIES` order), which later parts compare against. */
const headlineRows = new Map<string, Summary[]>();

function headline(title: string, w: SimWorkload, reseed?: (s: number) => SimWorkload | null): void {
  out();
  out(`## ${title}: ${w.name}`);
  out();
  const devices = w.cluster.nodes * w.cluster.devicesPerNode;
  out(
    `${w.jobs.length} jobs of ${w.tenants.length} tenants on ${w.cluster.nodes} nodes × ${w.cluster.devicesPerNode} devices (${devices}).`,
  );
  out();
  const rows: Summary[] = POLICIES.map(([label, p, planner]) => run(label, w, p, planner));
  headlineRows.set(w.name, rows);
  out(table(rows));
  out();
  out(tenantTable(rows));
  out();
  out('Estimated start, as the first round a job waited through showed it, against its actual start:');
  out();
  out(estimateTable(rows));
  out();
  const [fifo, kueue, temporal, ts] = rows as [Summary, Summary, Summary, Summary];
  const sat = saturated(rows);
  out(saturationLine(rows, sat));
  out();
  const [sFifo, sKueue, sTemporal, sTs] = sat.jobsPerHour as [number, number, number, number];
  const v = headlineVerdicts(fifo, kueue, ts, { fifo: sTs / sFifo, kueue: sTs / sKueue, hours: sat.hours });
  out(v.text);
  out();
  out(`Headline on ${title}: ${v.pass ? 'PASS' : 'FAIL'}`);
  const gain = sTs / sTemporal;
  out(
    `Stage planner (issue 12): Timeshare with the planner ${sTs.toFixed(2)} jobs/h while saturated against temporal-only ${sTemporal.toFixed(2)}: ${gain.toFixed(3)}× (target ≥ 1.1×): ${gain >= 1.1 ? 'PASS' : 'FAIL'} (over the arrival window ${times(ts.windowJobsPerHour, temporal.windowJobsPerHour)}, over the makespan ${times(ts.jobsPerHour, temporal.jobsPerHour)}); plans placed: ${ts.plans}; re-planning: ${ts.replans}. Without the planner Timeshare is ${(sTemporal / sFifo).toFixed(3)}× FIFO and ${(sTemporal / sKueue).toFixed(3)}× Kueue-like while saturated.`,
  );
  out(predictionLine(ts));
  out(ceilingLine(workloadCeilings(w), gain, sTs / sFifo));
  out(
    `Preemption notices by reason: ${rows.map((r) => `${r.label}: ${r.preemptionReasons}`).join('; ')} (\`compact\` moves a job to free devices elsewhere so a wider job gets a whole node, \`spread\` off a crowded device once nobody waits; either loses a restart, not its place).`,
  );
  for (const l of losses(ts, [fifo, kueue])) out(`- ${l}`);
  for (const r of rows)
    if (r.violations.length) out(`- invariant violations under ${r.label}: ${r.violations.join('; ')}`);
  // Under saturation most jobs wait past the aging bound, and an aged job that does not fit stops
  // backfill: the same change to both policies shows how much of the result that rule decides.
  const aging = { agingBoundSeconds: 6 * 3600 };
  const k6 = run('Kueue-like, aging 6 h', w, { ...kueueLikePolicy, ...aging });
  const t6 = run('Timeshare, aging 6 h', w, { ...timeshare, ...aging }, true);
  const lowest = (s: Summary) => Math.min(...s.tenants.map((t) => t.ratio)).toFixed(2);
  const [f6, kk6, tt6] = saturated([fifo, k6, t6]).jobsPerHour as [number, number, number];
  out();
  out(
    `Sensitivity (not the headline): with the aging bound at 6 h in both, Kueue-like ${kk6.toFixed(2)} jobs/h while saturated, Timeshare ${tt6.toFixed(2)} (${(tt6 / kk6).toFixed(3)}×; ${(tt6 / f6).toFixed(3)}× FIFO; the three compared while all had jobs waiting); mean completion ${(k6.meanCompletion / 3600).toFixed(2)} vs ${(t6.meanCompletion / 3600).toFixed(2)} h; lowest tenant share/entitled ${lowest(k6)} vs ${lowest(t6)}.`,
  );
  // Lending idle devices behind an aged job is Timeshare's; how much of the result it decides.
  const kl = run('Kueue-like with lending', w, { ...kueueLikePolicy, lendReservedDevices: true });
  const [lk, lkl, lts] = saturated([kueue, kl, ts]).jobsPerHour as [number, number, number];
  out(
    `Lending alone (not the headline): Kueue-like with \`lendReservedDevices\` ${lkl.toFixed(2)} jobs/h while saturated (${(lkl / lk).toFixed(3)}× Kueue-like); Timeshare is ${(lts / lkl).toFixed(3)}× it (the three compared while all had jobs waiting).`,
  );
  if (reseed && seeds > 1) acrossSeeds(title, rows, w, reseed);
}

/**
 * Timeshare's figures against the other policies of one run (rows in `POLICIES` order), in the
 * order `acrossSeeds` names them.
 */
function headlineRatios(rows: Summary[], w: SimWorkload): number[] {
  const [fifo, kueue, temporal, ts] = rows as [Summary, Summary, Summary, Summary];
  const [sFifo, sKueue, sTemporal, sTs] = saturated(rows).jobsPerHour as [number, number, number, number];
  return [
    sTs / sFifo,
    sTs / sKueue,
    sTs / sTemporal,
    ts.windowJobsPerHour / fifo.windowJobsPerHour,
    ts.windowJobsPerHour / kueue.windowJobsPerHour,
    ts.windowJobsPerHour / temporal.windowJobsPerHour,
    ts.jobsPerHour / fifo.jobsPerHour,
    ts.jobsPerHour / kueue.jobsPerHour,
    ts.jobsPerHour / temporal.jobsPerHour,
    Math.min(...ts.tenants.map((t) => t.ratio)),
    ts.meanCompletion / Math.min(fifo.meanCompletion, kueue.meanCompletion),
    ts.p95Completion / Math.min(fifo.p95Completion, kueue.p95Completion),
    ts.preemptions,
    ...ceilingRatios(workloadCeilings(w)),
  ];
}

/** The headline ratios over several seeds (each a new workload draw and new step draws). */
function acrossSeeds(
  title: string,
  first: Summary[],
  firstWorkload: SimWorkload,
  reseed: (s: number) => SimWorkload | null,
): void {
  const ratios: number[][] = [];
  const add = (rows: Summary[], w: SimWorkload) => ratios.push(headlineRatios(rows, w));
  add(first, firstWorkload);
  for (let s = seed + 1; s < seed + seeds; s++) {
    const w = reseed(s);
    if (w)
      add(
        POLICIES.map(([label, p, planner]) => run(label, w, p, planner, s)),
        w,
      );
  }
  const names = [
    'saturated jobs/h ÷ exclusive FIFO (target ≥ 1.5)',
    'saturated jobs/h ÷ Kueue-like (target ≥ 1.2)',
    'saturated jobs/h ÷ Timeshare temporal only (planner, target ≥ 1.1)',
    'jobs/h over the arrival window ÷ exclusive FIFO',
    'jobs/h over the arrival window ÷ Kueue-like',
    'jobs/h over the arrival window ÷ temporal only',
    'jobs/h over the makespan ÷ exclusive FIFO',
    'jobs/h over the makespan ÷ Kueue-like',
    'jobs/h over the makespan ÷ temporal only',
    'lowest tenant share / entitled (target ≥ 0.9)',
    'mean completion ÷ the better baseline (< 1 is better)',
    'p95 completion ÷ the better baseline (< 1 is better)',
    'preemption notices (Timeshare)',
    ...CEILING_NAMES,
  ];
  out();
  out(`Across seeds ${seed}–${seed + ratios.length - 1} (${title}, Timeshare with the planner):`);
  out();
  out('| figure | mean | 95% interval of the mean | min | max | seeds |');
  out('|---|---|---|---|---|---|');
  names.forEach((n, i) => {
    // A seed whose policies never all had jobs waiting has no saturated figure: left out, counted.
    const xs = ratios.map((r) => r[i]!).filter(Number.isFinite);
    if (xs.length === 0) return out(`| ${n} | – | – | – | – | 0 of ${ratios.length} |`);
    const m = xs.reduce((a, b) => a + b, 0) / xs.length;
    const ci = meanInterval(xs);
    out(
      `| ${n} | ${m.toFixed(3)} | ${ci ? `${ci[0].toFixed(3)}–${ci[1].toFixed(3)}` : '–'} | ${Math.min(...xs).toFixed(3)} | ${Math.max(...xs).toFixed(3)} | ${xs.length} of ${ratios.length} |`,
    );
  });
}

if (parts.has('synthetic'))
  headline('synthetic workload', syntheticWorkload({ seed }), (s) => syntheticWorkload({ seed: s }));
if (parts.has('philly')) {
  const w = phillyWorkload({ seed, path: values.trace, jobs: Number(values['philly-jobs']) });
  const at = (s: number) =>
    phillyWorkload({ seed: s, path: values.trace, jobs: Number(values['philly-jobs']) });
  if (w) headline('Philly replay', w, at);
  else {
    out();
    const where = values.trace ?? fileURLToPath(PHILLY_PATH);
    out(`## Philly replay: skipped (no trace at ${where}; pass --trace PATH)`);
  }
}
if (parts.has('scale')) scale();
if (parts.has('failures')) failures();
if (parts.has('file') && values.workload) headline('workload file', fileWorkload(values.workload, seed));

/**
 * The synthetic workload on four times the cluster (its offered work scales with it): the same
 * tenants and job sizes, so an 8-device job is a sixteenth of the pool instead of a quarter. For
 * information beside the headline, which stays on the 4-node default.
 */
function scale(): void {
  const nodes = 16;
  const count = Math.min(seeds, 3);
  out();
  out(`## Cluster size, for information: the synthetic workload on ${nodes} nodes (${nodes * 8} devices)`);
  out();
  out(
    '| seed | jobs | saturated jobs/h ÷ FIFO | ÷ Kueue-like | ÷ temporal only | lowest tenant share / entitled | mean completion ÷ better baseline |',
  );
  out('|---|---|---|---|---|---|---|');
  const cols: number[][] = [];
  for (let s = seed; s < seed + count; s++) {
    const w = syntheticWorkload({ seed: s, nodes });
    const all = headlineRatios(
      POLICIES.map(([label, p, planner]) => run(label, w, p, planner, s)),
      w,
    );
    // Saturated jobs/h against FIFO, Kueue-like and temporal only; lowest tenant; mean completion.
    const row = [0, 1, 2, 9, 10].map((i) => all[i]!);
    cols.push(row);
    out(`| ${s} | ${w.jobs.length} | ${row.map((x) => x.toFixed(3)).join(' | ')} |`);
  }
  const mean = (i: number) => cols.reduce((a, r) => a + r[i]!, 0) / cols.length;
  out(`| mean | | ${[0, 1, 2, 3, 4].map((i) => mean(i).toFixed(3)).join(' | ')} |`);
}

/**
 * The headline workloads (seed 1) with nodes that fail and come back: what each policy keeps of its
 * jobs/h, and what the failures cost. For information beside the headline, which has none.
 */
function failures(): void {
  const f = { mtbfHours: Number(values.mtbf), repairHours: 1, detectSeconds: 30 };
  out();
  out(
    `## Node failures, for information: each node fails every ${f.mtbfHours} h on average (exponential, seeded), comes back empty after ${f.repairHours} h, and is found lost ${f.detectSeconds} s after it fails`,
  );
  out();
  out(
    '| workload | policy | jobs/h while saturated (without failures) | jobs/h | node failures | jobs sent back (`node_lost`) | steps lost | done | invariant violations |',
  );
  out('|---|---|---|---|---|---|---|---|---|');
  const workloads: [string, SimWorkload | null][] = [
    ['synthetic', syntheticWorkload({ seed })],
    ['Philly window', phillyWorkload({ seed, path: values.trace, jobs: Number(values['philly-jobs']) })],
  ];
  for (const [name, w] of workloads) {
    if (!w) continue;
    // Without failures: the headline's own rows when that part ran, else run here.
    const clean =
      headlineRows.get(w.name) ?? POLICIES.map(([label, p, planner]) => run(label, w, p, planner));
    const runs = POLICIES.map(([, p, planner]) => simulate(w, p, { physics, seed, planner, failures: f }));
    const failed = runs.map((r, i) => summarise(POLICIES[i]![0], r));
    // Each set of four compared while all of its policies have jobs waiting (saturation.ts).
    const [sat, satClean] = [saturated(failed).jobsPerHour, saturated(clean).jobsPerHour];
    failed.forEach((s, i) => {
      const r = runs[i]!;
      out(
        `| ${name} | ${s.label} | ${sat[i]!.toFixed(2)} (${satClean[i]!.toFixed(2)}) | ${s.jobsPerHour.toFixed(2)} | ${r.recorder.nodeFailures} | ${r.recorder.nodeLostJobs} | ${s.stepsLost} | ${s.done}/${s.jobs} | ${s.violations.length} |`,
      );
    });
  }
}
