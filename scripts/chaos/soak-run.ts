/**
 * One soak, phase by phase: start the system, submit the planned jobs while the planned faults
 * strike, wait for the recoveries and for every job to end, then check. What it learnt stays on
 * the object so that the summary can be printed however far it got.
 */
import { sleep, Clock } from './clock.js';
import { checkJobsFinished } from './checks/outcomes.js';
import { finalChecks } from './checks/final.js';
import { planLine, type PlannedFault } from './fault-plan.js';
import { FaultInjector } from './injectors.js';
import { TERMINAL, type JobRec } from './jobs.js';
import { JobWatcher } from './monitors/job-watcher.js';
import { LockTimeline } from './monitors/lock-timeline.js';
import { runMonitors } from './monitors/loops.js';
import { ProcessSampler } from './monitors/process-sampler.js';
import type { SoakOptions } from './options.js';
import { alive } from './processes.js';
import type { Random } from './random.js';
import type { Outcome } from './report.js';
import { createTenants, submitJobs } from './submission.js';
import { SystemUnderTest } from './system.js';
import { Violations } from './violations.js';
import type { PlannedJob } from './workload.js';

export interface Plan {
  jobs: readonly PlannedJob[];
  faults: readonly PlannedFault[];
}

export class SoakRun {
  readonly clock = new Clock();
  readonly violations = new Violations(this.clock);
  /** accepted jobs, in the order the API accepted them */
  readonly jobs: JobRec[] = [];
  private system: SystemUnderTest | undefined;
  private timeline: LockTimeline | undefined;
  private injector: FaultInjector | undefined;

  constructor(
    private readonly opts: SoakOptions,
    private readonly plan: Plan,
    /** the seed's stream, already past the plan: the faults draw their targets from it */
    private readonly random: Random,
    private readonly logDir: string,
    private readonly prefix: string,
  ) {}

  async run(): Promise<void> {
    const { opts, clock, violations } = this;
    clock.log(
      `seed ${opts.seed}: ${opts.jobs} jobs, ${opts.workers} workers × ${opts.devices} devices, faults ${opts.faults.join(',')} for ${opts.faultSeconds} s; logs in ${this.logDir}`,
    );
    const system = (this.system = await SystemUnderTest.create(
      { ...opts, logDir: this.logDir },
      this.prefix,
      clock,
      violations,
    ));
    await system.startApiAndSchedulers();
    const tenants = await createTenants(system.client, system.adminKey);
    await system.startWorkers(opts.workers);
    clock.log(planLine(this.plan.faults));

    const timeline = (this.timeline = new LockTimeline(system.redis, system.prefix));
    const sampler = new ProcessSampler(timeline.pidJob, violations);
    const watcher = new JobWatcher(system.client, tenants, this.jobs, violations);
    const injector = (this.injector = new FaultInjector(system, timeline, this.random, clock, this.jobs));

    const startedAt = Date.now();
    const monitors = runMonitors({ system, timeline, sampler, watcher, jobs: this.jobs, clock });
    const submitter = submitJobs(this.plan.jobs, startedAt, {
      seed: opts.seed,
      client: system.client,
      tenants,
      jobs: this.jobs,
      violations,
      clock,
    });
    for (const f of this.plan.faults) {
      await sleep(Math.max(0, startedAt + f.at - Date.now()));
      try {
        await injector.inject(f.kind, f.random);
      } catch (e) {
        clock.log(`fault ${f.kind} failed: ${(e as Error).message}`);
      }
    }
    await submitter;
    clock.log('faults over; waiting for recoveries and for every job to end');
    await Promise.all(injector.pending);
    for (const w of system.workers) if (w.paused && alive(w.proc)) w.proc!.child.kill('SIGCONT');

    await this.drain(system);
    system.stopping = true;
    await monitors;
    await watcher.pollStatuses().catch(() => {});
    await checkJobsFinished(violations, system.sql, opts.drainSeconds);
    await finalChecks({
      violations,
      sql: system.sql,
      client: system.client,
      jobs: this.jobs,
      watcher,
      timeline,
      lastAlive: sampler.lastAlive,
      faults: injector,
    });
  }

  /** Until every job has ended (and all were accepted), or drainSeconds have passed. */
  private async drain(system: SystemUnderTest): Promise<void> {
    const deadline = Date.now() + this.opts.drainSeconds * 1000;
    let lastReport = 0;
    while (Date.now() < deadline) {
      const r = await system.sql.query(`SELECT status, count(*)::int AS n FROM jobs GROUP BY status`);
      const by = Object.fromEntries(r.rows.map((x) => [x.status, x.n]));
      if (Date.now() - lastReport > 15_000) {
        this.clock.log(`jobs: ${JSON.stringify(by)}`);
        lastReport = Date.now();
      }
      if (r.rows.every((x) => TERMINAL.has(x.status)) && this.jobs.length === this.opts.jobs) break;
      await sleep(1000);
    }
  }

  outcome(): Outcome {
    return {
      seed: this.opts.seed,
      jobs: this.jobs,
      violations: this.violations,
      faultLog: this.injector?.log ?? [],
      faultCounts: this.injector?.counts ?? {},
    };
  }

  /** Stops whatever was started, however far the run got. */
  async cleanup(): Promise<void> {
    await this.system?.stop(this.timeline?.pidJob.keys() ?? []);
  }
}
