/**
 * `npm run chaos -- --seed N`: a randomised multi-fault soak against real processes (see
 * soak-run.ts; `--help` lists the options). The same seed gives the same jobs and the same fault
 * plan (`--plan-only` prints them); what each fault hits still depends on what it finds alive.
 * Exit status: 0 no invariant broke, 1 one did, 2 the soak itself failed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { testPrefix } from '../../test/helpers/redis.js';
import { drawFaultPlan, formatFaultPlan } from './fault-plan.js';
import { parseOptions } from './options.js';
import { Random } from './random.js';
import { printSummary, writeResult } from './report.js';
import { SoakRun } from './soak-run.js';
import { drawJobs, formatJobs } from './workload.js';

const opts = parseOptions(process.argv.slice(2));

// Everything the seed decides, drawn before anything runs: the jobs first, then the faults.
const random = new Random(opts.seed);
const plan = { jobs: drawJobs(random, opts), faults: drawFaultPlan(random, opts) };

if (opts.planOnly) {
  console.log(
    `seed ${opts.seed}: ${opts.jobs} jobs, faults ${opts.faults.join(',')} for ${opts.faultSeconds} s`,
  );
  console.log('jobs (submitted at, tenant, spec):');
  for (const line of formatJobs(plan.jobs)) console.log(line);
  console.log('faults (at, kind, seed of its own draws):');
  for (const line of formatFaultPlan(plan.faults)) console.log(line);
  process.exit(0);
}

/** Prints the summary however far the run got, and cleans up; the exit status. */
async function runSoak(soak: SoakRun, logDir: string): Promise<number> {
  let code = 0;
  try {
    await soak.run();
  } catch (e) {
    soak.clock.log(`soak failed: ${(e as Error).stack}`);
    code = 2;
  }
  const outcome = soak.outcome();
  printSummary(outcome);
  writeResult(logDir, outcome);
  if (opts.keepLogs) console.log(`logs kept in ${logDir}`);
  if (outcome.violations.list.length && !code) code = 1;
  await soak.cleanup();
  if (!opts.keepLogs) rmSync(logDir, { recursive: true, force: true });
  return code;
}

const logDir = mkdtempSync(path.join(os.tmpdir(), 'timeshare-chaos-'));
process.exit(await runSoak(new SoakRun(opts, plan, random, logDir, testPrefix()), logDir));
