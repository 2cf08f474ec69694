/**
 * The soak's options. Numbers go through the CLI's parsers (cli/numeric-options.ts), so that
 * `--jobs abc` is refused with the option's name instead of becoming NaN and failing somewhere
 * in the middle of a run; the bounds keep out values that would hang it (a gap of 0 plans faults
 * forever) or that the API would refuse at the first submission.
 */
import { randomBytes } from 'node:crypto';
import { Command, InvalidArgumentError, Option } from 'commander';
import { parseInteger, parseNumber } from '../../cli/numeric-options.js';
import { modelPresets } from '../../common/engine-vocabulary.js';
import { ALL_FAULTS, DEFAULT_FAULTS, type FaultKind } from './fault-plan.js';

export interface Range {
  lo: number;
  hi: number;
}

export interface SoakOptions {
  seed: number;
  jobs: number;
  faultSeconds: number;
  workers: number;
  devices: number;
  drainSeconds: number;
  keepLogs: boolean;
  preset: string;
  steps: Range;
  gap: Range;
  nodeTimeoutMs: number;
  faults: FaultKind[];
  planOnly: boolean;
}

function atLeast(min: number, parse: (value: string) => number) {
  return (value: string) => {
    const n = parse(value);
    if (n < min) throw new InvalidArgumentError(`Must be at least ${min}.`);
    return n;
  };
}

function range(min: number, what: string) {
  return (value: string): Range => {
    const m = /^([^-]+)-([^-]+)$/.exec(value);
    if (!m) throw new InvalidArgumentError(`Not a range LO-HI (${what}).`);
    const lo = parseNumber(m[1]!);
    const hi = parseNumber(m[2]!);
    if (lo < min || hi < lo) throw new InvalidArgumentError(`Must be LO-HI with ${min} ≤ LO ≤ HI (${what}).`);
    return { lo, hi };
  };
}

function faultKinds(value: string): FaultKind[] {
  const kinds = value.split(',');
  const unknown = kinds.filter((k) => !(ALL_FAULTS as readonly string[]).includes(k));
  if (unknown.length)
    throw new InvalidArgumentError(`Unknown fault ${unknown.join(', ')}; known: ${ALL_FAULTS.join(', ')}.`);
  return kinds as FaultKind[];
}

/** Small enough to type back in when a run is to be replayed. */
const randomSeed = () => randomBytes(4).readUInt32LE(0) % 1_000_000;

export function parseOptions(argv: readonly string[]): SoakOptions {
  const program = new Command('chaos')
    .description(
      'Randomised multi-fault soak: real API, two schedulers and worker daemons with the engine, ' +
        'seeded faults while tenants’ jobs run, invariants checked throughout and at the end. ' +
        'Needs PostgreSQL and Redis like the tests. Exits 1 when an invariant broke, 2 when the soak itself failed.',
    )
    .option('--seed <n>', 'seed of the jobs and of the fault plan (default: random)', parseInteger)
    .option('--jobs <n>', 'jobs to submit', atLeast(0, parseInteger), 30)
    .option('--fault-seconds <s>', 'how long faults are injected', atLeast(0, parseNumber), 180)
    .option('--workers <n>', 'worker daemons', atLeast(1, parseInteger), 3)
    .option('--devices <n>', 'virtual devices per worker', atLeast(1, parseInteger), 2)
    .option(
      '--drain-seconds <s>',
      'how long jobs may take to end after the faults',
      atLeast(0, parseNumber),
      300,
    )
    .option('--keep-logs', 'keep the processes’ logs and result.json')
    .addOption(
      new Option('--preset <name>', 'model preset of every job').choices(modelPresets).default('tiny'),
    )
    .addOption(
      new Option('--steps <lo-hi>', 'steps of each job, drawn between lo and hi')
        .argParser(range(1, 'steps'))
        .default({ lo: 80, hi: 240 }, '80-240'),
    )
    .addOption(
      new Option('--gap <lo-hi>', 'seconds between planned faults')
        .argParser((value) => {
          const r = range(0, 'seconds')(value);
          if (r.hi <= 0) throw new InvalidArgumentError('HI must be above 0.');
          return r;
        })
        .default({ lo: 2, hi: 12 }, '2-12'),
    )
    .option(
      '--node-timeout-ms <ms>',
      'TIMESHARE_NODE_TIMEOUT_MS of the system',
      atLeast(1, parseInteger),
      4000,
    )
    .addOption(
      new Option(
        '--faults <kinds>',
        `fault kinds to draw from, comma-separated (one listed twice is drawn twice as often); also: ${ALL_FAULTS.filter((k) => !(DEFAULT_FAULTS as readonly string[]).includes(k)).join(', ')}`,
      )
        .argParser(faultKinds)
        .default([...DEFAULT_FAULTS], DEFAULT_FAULTS.join(',')),
    )
    .option('--plan-only', 'print the jobs and the fault plan the seed gives, and exit')
    .showHelpAfterError();
  program.parse(argv, { from: 'user' });
  const o = program.opts<Omit<SoakOptions, 'seed' | 'keepLogs' | 'planOnly'> & Partial<SoakOptions>>();
  return { ...o, seed: o.seed ?? randomSeed(), keepLogs: o.keepLogs ?? false, planOnly: o.planOnly ?? false };
}
