/**
 * Strikes the planned faults. Each picks its target from what is alive when it strikes, and
 * records what it did: the attempts checks need to know which requeues the soak caused.
 */
import { deleteKeys } from '../../test/helpers/redis.js';
import { sleep, type Clock } from './clock.js';
import type { FaultKind } from './fault-plan.js';
import { TERMINAL, type JobRec } from './jobs.js';
import type { LockTimeline } from './monitors/lock-timeline.js';
import { childrenOf, procState } from './procfs.js';
import { alive } from './processes.js';
import type { Random } from './random.js';
import type { SystemUnderTest } from './system.js';

export interface FaultRec {
  /** ms since the soak began */
  at: number;
  kind: FaultKind;
  target: string;
  detail: string;
}

export interface EngineKill {
  at: number;
  job: string;
  pid: number;
}

export interface DaemonFault {
  at: number;
  node: string;
  kind: string;
  /** when it was restarted or continued (local ms) */
  until: number;
}

export class FaultInjector {
  readonly log: FaultRec[] = [];
  readonly counts: Record<string, number> = {};
  readonly engineKills: EngineKill[] = [];
  readonly daemonFaults: DaemonFault[] = [];
  /** restarts and resumptions still to come: the soak waits for them before it drains */
  readonly pending: Promise<unknown>[] = [];

  constructor(
    private readonly system: SystemUnderTest,
    private readonly timeline: LockTimeline,
    /** the seed's stream, for the choice of target: the same draws, in the same order, as ever */
    private readonly random: Random,
    private readonly clock: Clock,
    /** the accepted jobs, for `pause_job` */
    private readonly jobs: readonly JobRec[] = [],
  ) {}

  private record(kind: FaultKind, target: string, detail = ''): void {
    this.log.push({ at: this.clock.elapsedMs(), kind, target, detail });
    this.counts[kind] = (this.counts[kind] ?? 0) + 1;
    this.clock.log(`FAULT ${kind} → ${target} ${detail}`);
  }

  /** own: the fault's own stream, for its delays. */
  async inject(kind: FaultKind, own: Random): Promise<void> {
    switch (kind) {
      case 'kill_leader':
      case 'kill_standby':
        return this.killScheduler(kind, own);
      case 'kill_api':
        return this.killApi(own);
      case 'kill_daemon':
        return this.killDaemon(own);
      case 'kill_engine':
        return this.killEngine();
      case 'pause_daemon':
        return this.pauseDaemon(own);
      case 'redis_wipe':
        return this.wipeRedis();
      case 'pause_job':
        return this.pauseJob(own);
    }
  }

  /**
   * Pauses a job that has not ended, as its tenant, and resumes it 1–8 s later; both retried
   * through API outages (a pause the API answered before it died is applied: the retry returns
   * the job). The soak's checks hold for it as for any job: it must still succeed, from its newest
   * checkpoint, its pause charged no attempt.
   */
  private pauseJob(own: Random): void {
    const job = this.random.pickOrNone(this.jobs.filter((j) => !j.final && !TERMINAL.has(j.status)));
    if (!job) return this.clock.log('(pause_job: no job)');
    const ms = 1000 + own.next() * 7000;
    const act = async (action: 'pause' | 'resume') => {
      for (;;) {
        const r = await this.system.client
          .call('POST', `/v1/jobs/${job.id}/${action}`, job.tenant.token)
          .catch(() => null);
        // 409: it ended meanwhile, nothing to pause or resume.
        if (r && (r.status === 200 || r.status === 409)) return r;
        // A 5xx during an outage, or a 429 from the rate limit: again shortly.
        if (r && r.status < 500 && r.status !== 429)
          throw new Error(`${action} ${job.id}: ${r.status} ${JSON.stringify(r.body)}`);
        await sleep(250);
      }
    };
    // Not awaited: through an API outage the pause waits, the plan's next fault does not.
    this.pending.push(
      (async () => {
        const paused = await act('pause');
        const detail =
          paused.status === 409 ? '(it had ended)' : `${paused.body.status}; resume in ${ms.toFixed(0)} ms`;
        this.record('pause_job', `job ${job.id}`, detail);
        if (paused.status === 409) return;
        await sleep(ms);
        await act('resume');
        this.clock.log(`resumed job ${job.id}`);
      })().catch((e: unknown) => this.clock.log(`pause_job ${job.id} failed: ${(e as Error).message}`)),
    );
  }

  private async killScheduler(kind: 'kill_leader' | 'kill_standby', own: Random): Promise<void> {
    const { system } = this;
    const lp = await system.leaderPid();
    const idx = system.schedulers.findIndex((s) =>
      kind === 'kill_leader' ? alive(s) && s!.child.pid === lp : alive(s) && s!.child.pid !== lp,
    );
    if (idx < 0) return this.clock.log(`(${kind}: no target)`);
    const s = system.schedulers[idx]!;
    const delay = 300 + own.next() * 3000;
    s.child.kill('SIGKILL');
    this.record(kind, `scheduler-${idx} pid ${s.child.pid}`, `restart in ${delay.toFixed(0)} ms`);
    this.pending.push(
      s.exited.then(async () => {
        await sleep(delay);
        if (!system.stopping) system.startScheduler(idx);
      }),
    );
  }

  /** Restarted even while the soak winds down: the final checks read the API. */
  private killApi(own: Random): void {
    const { system } = this;
    if (!alive(system.api)) return this.clock.log('(kill_api: API already down)');
    const delay = 200 + own.next() * 6000;
    const a = system.api!;
    a.child.kill('SIGKILL');
    const down = system.client.outages.begin();
    this.record('kill_api', `api pid ${a.child.pid}`, `restart in ${delay.toFixed(0)} ms`);
    this.pending.push(
      a.exited.then(async () => {
        await sleep(delay);
        system.startApi();
        await system.waitApi();
        down.to = Date.now();
        this.clock.log(`api back after ${((down.to - down.from) / 1000).toFixed(1)} s`);
      }),
    );
  }

  private killDaemon(own: Random): void {
    const { system } = this;
    const w = this.random.pickOrNone(system.workers.filter((x) => alive(x.proc)));
    if (!w) return;
    const delay = 300 + own.next() * 4000;
    const p = w.proc!;
    // A stopped process does not die of SIGKILL until it runs again.
    if (w.paused) p.child.kill('SIGCONT');
    p.child.kill('SIGKILL');
    this.record('kill_daemon', `${w.name} pid ${p.child.pid}`, `restart in ${delay.toFixed(0)} ms`);
    this.daemonFaults.push({
      at: Date.now(),
      node: w.nodeId!,
      kind: 'kill_daemon',
      until: Date.now() + delay,
    });
    this.pending.push(
      p.exited.then(async () => {
        await sleep(delay);
        if (!system.stopping) system.startWorker(w);
      }),
    );
  }

  /** A job process holding devices now (the timeline's open holds name their pid), else any job process. */
  private killEngine(): void {
    const { system, timeline } = this;
    const live = [...timeline.holds.values()].filter(
      (h) =>
        h.end === null &&
        procState(h.pid) &&
        system.workers.some((w) => w.proc && childrenOf(w.proc.child.pid!).includes(h.pid)),
    );
    let pid: number | undefined;
    let job = '?';
    if (live.length) {
      const h = this.random.pick(live);
      pid = h.pid;
      job = h.job;
    } else {
      const kids = system.workers
        .flatMap((w) => (w.proc ? childrenOf(w.proc.child.pid!) : []))
        .filter((p) => timeline.pidJob.has(p));
      if (kids.length) {
        pid = this.random.pick(kids);
        job = timeline.pidJob.get(pid) ?? '?';
      }
    }
    if (!pid) return this.clock.log('(kill_engine: no job process)');
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return;
    }
    this.engineKills.push({ at: Date.now(), job, pid });
    this.record('kill_engine', `job ${job} pid ${pid}`);
  }

  private pauseDaemon(own: Random): void {
    const w = this.random.pickOrNone(this.system.workers.filter((x) => alive(x.proc) && !x.paused));
    if (!w) return;
    const ms = 800 + own.next() * 7000;
    const p = w.proc!;
    p.child.kill('SIGSTOP');
    w.paused = true;
    this.record('pause_daemon', `${w.name} pid ${p.child.pid}`, `for ${ms.toFixed(0)} ms`);
    this.daemonFaults.push({ at: Date.now(), node: w.nodeId!, kind: 'pause_daemon', until: Date.now() + ms });
    this.pending.push(
      (async () => {
        await sleep(ms);
        if (alive(p)) p.child.kill('SIGCONT');
        w.paused = false;
      })(),
    );
  }

  /** Only the run's own prefix: the Redis server may be shared (the tests use it too). */
  private async wipeRedis(): Promise<void> {
    const { prefix } = this.system;
    const n = await this.timeline.wipe(() => deleteKeys(prefix));
    this.record('redis_wipe', prefix, `${n} keys`);
  }
}
