/**
 * Runs each assigned job in its own child process and relays what it reports to the control plane,
 * in order, through the node's outbox (report-outbox.ts). A child that exits without saying how its run ended crashed:
 * that is reported with the exit status and the end of its stderr, and the control plane retries
 * the job (resuming from its last checkpoint) until its attempts run out.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../common/logger.js';
import type { DeviceLockService } from '../common/device-lock/index.js';
import type { StorageConfig } from '../common/storage/index.js';
import type { Assignment } from './control-plane-client.js';
import type { ControlAction, DaemonToRunner, RunnerStart, RunnerToDaemon } from './messages.js';
import type { ReportOutbox } from './report-outbox.js';
import { crashMessage } from './crash-message.js';
import { SpareRunner } from './spare-runner.js';
import { LAPSED_EXIT_CODE } from './supervision.js';
import { LOCK_OUTAGE_EXIT_CODE } from './lock-outage.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const runningFromSource = import.meta.url.endsWith('.ts');
const runnerEntry = path.join(here, runningFromSource ? 'job-runner.ts' : 'job-runner.js');

interface Running {
  /** The run this process runs (its assignment's `queueSeq`): its reports name it, its control requests must. */
  queueSeq: number;
  /** Reports and checkpoint records put for this run so far: the next one's `reportSeq` follows. */
  reports: number;
  child: ChildProcess;
  ended: boolean;
  relay: Promise<void>;
  stderr: string;
  exited: Promise<void>;
}

export interface SupervisorOptions {
  nodeId: string;
  storage: StorageConfig;
  redisUrl: string;
  lockPrefix: string;
  leaseMs: number;
  /** The daemon tells its job processes how long they may run every quarter of this (supervision.ts). */
  supervisionMs: number;
  /**
   * How long a job process may run from now: to its heartbeat lease's deadline (supervision.ts);
   * absent, `supervisionMs` from each word (tests without a control plane).
   */
  runForMs?: () => number;
  /** The reactive balancer of spatial placements, passed to every job process. */
  balancer?: RunnerStart['balancer'];
  /** Sees every message a job process sends (the daemon's metrics count from them). */
  observe?: (m: RunnerToDaemon) => void;
  /** A job process died without saying how its run ended. */
  onCrash?: () => void;
  /** Keep a job process forked ahead of the next job (spare-runner.ts); default on. */
  spareRunner?: boolean;
  /** Forks a job process (tests put a stand-in here); default: job-runner.ts. */
  forkRunner?: () => ChildProcess;
  /**
   * The device lock, to end what a job process that exited still had there: its holds would lapse
   * a lease later, its waiters expire a waiter TTL later, and one granted meanwhile held its
   * devices for a lease more (a chaos soak saw a dead process granted a device).
   */
  locks?: Pick<DeviceLockService, 'abandonHolder'>;
}

export class JobSupervisor {
  private readonly jobs = new Map<string, Running>();
  /** device index → job → bytes the job holds on it now. */
  private readonly occupied = new Map<number, Map<string, number>>();
  /**
   * Jobs told about the preemption notice their assignment carried. Only the assignment's: an
   * admin's preemption comes by Redis alone, with no notice on the row, and an assignment without
   * one must not read as its withdrawal.
   */
  private readonly noticed = new Set<string>();
  /**
   * job → the run (`queueSeq`) that ended here last, kept until the assignment disappears or
   * names another run. Its outcome goes through the outbox, and until the control plane has it the
   * assignment still lists the run as `placed` or `running` (behind a backlog, or an outage): that
   * run is over and must not start again (a QA run saw one job run 5 times so).
   */
  private readonly ended = new Map<string, number>();

  /** Bytes in use on a device by the jobs holding it now. */
  usedBytes(index: number): number {
    let sum = 0;
    for (const b of this.occupied.get(index)?.values() ?? []) sum += b;
    return sum;
  }

  private occupy(jobId: string, devices: number[], bytes: number): void {
    for (const d of devices) {
      const m = this.occupied.get(d) ?? new Map<string, number>();
      if (bytes > 0) m.set(jobId, bytes);
      else m.delete(jobId);
      this.occupied.set(d, m);
    }
  }

  private readonly spare: SpareRunner;

  constructor(
    /** Every report goes through it, so none is lost while the API is unreachable (report-outbox.ts). */
    private readonly outbox: ReportOutbox,
    private readonly logger: Logger,
    private readonly opts: SupervisorOptions,
  ) {
    this.spare = new SpareRunner(
      opts.forkRunner ??
        (() =>
          fork(runnerEntry, [], {
            execArgv: runningFromSource ? ['--import', 'tsx'] : [],
            stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
            env: process.env,
          })),
      opts.spareRunner ?? true,
    );
    this.spare.fill();
    // Unref'd: the daemon's exit is its drain's business, not this timer's. A child exiting
    // meanwhile refuses the message; its exit is handled where it is watched.
    setInterval(() => this.leaseRenewed(), Math.max(50, Math.floor(opts.supervisionMs / 4))).unref();
  }

  private runForMs(): number {
    return this.opts.runForMs ? this.opts.runForMs() : this.opts.supervisionMs;
  }

  /**
   * Tells every job process how long it may run. Called as soon as a heartbeat is accepted, not only
   * on the timer: a deadline renewed a timer tick late is a tick shorter.
   */
  leaseRenewed(): void {
    const forMs = this.runForMs();
    // Past the deadline there is nothing to give: each job process stops at the one it has.
    if (forMs <= 0) return;
    for (const r of this.jobs.values())
      if (r.child.connected) r.child.send({ t: 'alive', forMs } satisfies DaemonToRunner, () => undefined);
  }

  get running(): string[] {
    return [...this.jobs.keys()];
  }

  /**
   * Brings this node in line with its assignments: starts every placed job not running here yet
   * (unless this node already ran that run to its end and the control plane has not heard yet),
   * passes a preemption notice on (the Redis control message may have been lost; the assignment
   * carries it too), and stops a job that is no longer assigned here (the scheduler took it back
   * after the grace period, or it was cancelled), or is assigned here in another run (it was
   * requeued and placed here again): its reports would be refused anyway, and it must not keep
   * renewing leases on devices that are someone else's now. A new run starts once the old one's
   * process is gone. A notice applies to the run its assignment is.
   */
  reconcile(assignments: Assignment[]): void {
    const assigned = new Map<string, number>();
    for (const a of assignments) assigned.set(a.jobId, a.queueSeq);
    // Forgotten once the control plane has the outcome: the job is done, or placed in another run.
    for (const [jobId, queueSeq] of this.ended)
      if (assigned.get(jobId) !== queueSeq) this.ended.delete(jobId);
    for (const a of assignments) {
      if (a.status === 'placed' && !this.jobs.has(a.jobId)) {
        if (!this.hasEnded(a.jobId, a.queueSeq)) this.start(a);
        else
          this.logger.debug(
            { jobId: a.jobId, queueSeq: a.queueSeq },
            'run ended here; its outcome is on its way',
          );
      } else if (
        a.preemptRequestedAt &&
        !this.noticed.has(a.jobId) &&
        this.control(a.jobId, 'preempt', a.queueSeq)
      )
        this.noticed.add(a.jobId);
      // An assignment read after one that carried the notice (polls never overlap), for the same
      // run, without it: the scheduler withdrew it (scheduler/core/withdraw.ts).
      else if (
        a.preemptRequestedAt === null &&
        this.noticed.has(a.jobId) &&
        this.jobs.get(a.jobId)?.queueSeq === a.queueSeq
      ) {
        this.noticed.delete(a.jobId);
        if (this.withdraw(a.jobId, a.queueSeq))
          // Said as sent: a job whose checkpoint has begun stops all the same (its outcome says so).
          this.logger.info(
            { jobId: a.jobId, queueSeq: a.queueSeq },
            'preemption notice withdrawn: told the job, which runs on unless its checkpoint has begun',
          );
      }
    }
    for (const [jobId, r] of this.jobs) {
      if (assigned.get(jobId) !== r.queueSeq && !r.ended && this.control(jobId, 'cancel', r.queueSeq))
        this.logger.warn({ jobId, queueSeq: r.queueSeq }, 'run no longer assigned to this node: stopping it');
    }
  }

  /**
   * Whether run `queueSeq` of the job already ran to its end on this node: this daemon saw it end,
   * or its outcome waits in the outbox (put by an earlier daemon too, which left it on disk).
   */
  private hasEnded(jobId: string, queueSeq: number): boolean {
    return this.ended.get(jobId) === queueSeq || this.outbox.holdsFinish(jobId, queueSeq);
  }

  private start(a: Assignment): void {
    const child = this.spare.take();
    const queueSeq = a.queueSeq;
    const r: Running = {
      queueSeq,
      reports: 0,
      child,
      ended: false,
      relay: Promise.resolve(),
      stderr: '',
      exited: Promise.resolve(),
    };
    this.jobs.set(a.jobId, r);
    child.stderr!.on('data', (d: Buffer) => {
      r.stderr = (r.stderr + d.toString()).slice(-4000);
      process.stderr.write(d);
    });
    const relay = (fn: () => Promise<unknown>) => {
      r.relay = r.relay.then(fn).then(
        () => undefined,
        (err) => this.logger.warn({ err: String(err), jobId: a.jobId }, 'report to control plane failed'),
      );
    };
    const { nodeId } = this.opts;
    child.on('message', (m: RunnerToDaemon) => {
      this.opts.observe?.(m);
      switch (m.t) {
        case 'started':
          relay(() =>
            this.outbox.put({
              kind: 'start',
              nodeId,
              jobId: a.jobId,
              body: { queueSeq, resumedFromStep: m.resumedFromStep },
            }),
          );
          break;
        case 'report': {
          // The job's first step is done: the next spare no longer competes with its start.
          if (m.metrics.length) this.spare.fill();
          const reportSeq = ++r.reports;
          relay(() =>
            this.outbox.put({
              kind: 'report',
              nodeId,
              jobId: a.jobId,
              body: {
                queueSeq,
                reportSeq,
                metrics: m.metrics,
                profiles: m.profiles,
                events: m.events ?? [],
                deviceSeconds: m.deviceSeconds,
              },
            }),
          );
          break;
        }
        case 'checkpoint': {
          const { t: _t, ...body } = m;
          const reportSeq = ++r.reports;
          relay(() =>
            this.outbox.put({
              kind: 'checkpoint',
              nodeId,
              jobId: a.jobId,
              body: { ...body, queueSeq, reportSeq },
            }),
          );
          break;
        }
        case 'finished':
          r.ended = true;
          relay(() =>
            this.outbox.put({
              kind: 'finish',
              nodeId,
              jobId: a.jobId,
              // Why a success ended where it did (node protocol 3); other outcomes have none.
              body: {
                queueSeq,
                outcome: m.outcome,
                error: m.error,
                ...(m.reason ? { reason: m.reason } : {}),
                endedAt: new Date().toISOString(),
              },
            }),
          );
          this.logger.info({ jobId: a.jobId, outcome: m.outcome, reason: m.reason }, 'job run ended');
          break;
        case 'occupancy':
          this.occupy(a.jobId, m.devices, m.bytes);
          break;
        case 'cancelled':
          r.ended = true;
          this.logger.info({ jobId: a.jobId }, 'job cancelled');
          break;
      }
    });
    r.exited = new Promise<void>((resolve) => {
      child.on('exit', (code, signal) => {
        // The job process is its own lock holder (stage-loop.ts): nothing of it is alive now.
        if (this.opts.locks && child.pid !== undefined)
          this.opts.locks.abandonHolder(`${nodeId}:${child.pid}`).then(
            (ended) => {
              if (ended.holdsEnded || ended.waitersDropped)
                this.logger.info(
                  { jobId: a.jobId, ...ended },
                  'ended what the exited job process held in the lock',
                );
            },
            (err: unknown) =>
              this.logger.warn(
                { jobId: a.jobId, err: String(err) },
                "could not end the exited job process's holds; they lapse",
              ),
          );
        if (!r.ended) {
          // Stopped because this daemon fell silent (it lost the control plane, or was paused), or
          // because the device lock's Redis was out of reach for longer than the lock allows
          // (lock-outage.ts): the platform ended the run, and it costs the job none of its attempts.
          const lapsed = code === LAPSED_EXIT_CODE || code === LOCK_OUTAGE_EXIT_CODE;
          const error = crashMessage(code, signal, r.stderr);
          if (code === LAPSED_EXIT_CODE)
            this.logger.warn({ jobId: a.jobId }, 'job process stopped: its daemon lost contact');
          else if (lapsed)
            this.logger.warn(
              { jobId: a.jobId },
              "job process stopped: the device lock's Redis was unreachable",
            );
          else {
            this.logger.warn({ jobId: a.jobId, code, signal }, 'job process crashed');
            this.opts.onCrash?.();
          }
          relay(() =>
            this.outbox.put({
              kind: 'finish',
              nodeId,
              jobId: a.jobId,
              body: {
                queueSeq,
                outcome: lapsed ? 'lost_contact' : 'crashed',
                error: error.slice(0, 4000),
                endedAt: new Date().toISOString(),
              },
            }),
          );
        }
        this.occupy(a.jobId, [...this.occupied.keys()], 0);
        this.spare.fill();
        void r.relay.then(() => {
          this.ended.set(a.jobId, queueSeq);
          this.jobs.delete(a.jobId);
          this.noticed.delete(a.jobId);
          resolve();
        });
      });
    });
    const start: RunnerStart = {
      t: 'start',
      jobId: a.jobId,
      nodeId,
      spec: a.spec,
      placement: a.placement,
      priority: a.priority,
      attempt: a.attempts + 1,
      resume: a.resumeFrom
        ? {
            dirKey: path.posix.dirname(a.resumeFrom.storageKey),
            step: a.resumeFrom.step,
            fromOwnRun: a.resumeFrom.fromOwnRun,
          }
        : null,
      storage: this.opts.storage,
      redisUrl: this.opts.redisUrl,
      lockPrefix: this.opts.lockPrefix,
      leaseMs: this.opts.leaseMs,
      runForMs: this.runForMs(),
      ...(this.opts.balancer ? { balancer: this.opts.balancer } : {}),
    };
    child.send(start);
    this.logger.info(
      { jobId: a.jobId, resumeFrom: a.resumeFrom?.step ?? null, placement: a.placement },
      'job process started',
    );
  }

  /**
   * Passes a request on to the job's process if it runs run `queueSeq`: a request for another run
   * (a late Redis message about an earlier run of a job placed here again) is not this process's.
   */
  control(jobId: string, action: ControlAction, queueSeq: number): boolean {
    const r = this.jobs.get(jobId);
    if (!r || r.queueSeq !== queueSeq || r.child.exitCode !== null) return false;
    r.child.send({ t: action } satisfies DaemonToRunner);
    return true;
  }

  /** Tells run `queueSeq` of the job that the notice passed on was withdrawn. */
  private withdraw(jobId: string, queueSeq: number): boolean {
    const r = this.jobs.get(jobId);
    if (!r || r.queueSeq !== queueSeq || r.child.exitCode !== null || r.ended) return false;
    r.child.send({ t: 'withdraw' } satisfies DaemonToRunner);
    return true;
  }

  /** SIGTERM: every job checkpoints and goes back to the queue; waits for all of them. */
  async drain(timeoutMs: number): Promise<void> {
    this.spare.close();
    const all = [...this.jobs.entries()];
    for (const [jobId, r] of all) this.control(jobId, 'drain', r.queueSeq);
    const done = Promise.all(all.map(([, r]) => r.exited));
    const timer = new Promise<'timeout'>((resolve) =>
      setTimeout(() => resolve('timeout'), timeoutMs).unref(),
    );
    if ((await Promise.race([done, timer])) === 'timeout') {
      for (const [, r] of all) r.child.kill('SIGKILL');
      await done;
    }
  }
}
