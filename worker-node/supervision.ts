/**
 * A job never runs unsupervised, nor after the control plane may have given it to another node. A
 * daemon that died closes the IPC channel and its job processes exit at once (job-runner.ts). A
 * daemon that is paused (SIGSTOP, a VM stopped, a hung event loop) closes nothing, and one cut off
 * from the API (a network partition that leaves Redis and the checkpoint store reachable) is alive
 * and well: either way its heartbeats stop reaching the API, and the scheduler gives its jobs to
 * other nodes after the node timeout. Its job processes must be gone by then, or the job runs twice
 * and both runs write the same checkpoint directories. So the daemon tells each job process it is
 * alive every `supervisionMs / 4`, but only while its last accepted heartbeat is younger than
 * `supervisionMs`; a job process that has not heard from it for `supervisionMs` exits. That is at
 * most 2 × `supervisionMs` = node timeout − heartbeat period after the last accepted heartbeat,
 * plus one check of the job process's watch (≤ CHECK_MS). Both ends count from when the heartbeat
 * was sent, not answered: the API records it in between, so the lease never outlives the record
 * (counted from the answer, the margin at the tests' 4 s node timeout and 500 ms heartbeat was
 * 500 − 437 (one check of a quarter of the limit) − the answer's latency: ~60 ms, gone under load). It
 * exits with `LAPSED_EXIT_CODE`, and the daemon, once it is back, reports the run as `lost_contact`:
 * the platform's doing, not the job's, so it uses none of the job's attempts. If the scheduler
 * found the node lost meanwhile, it requeued the run as `node_lost`, which used an attempt; the
 * report then gives the attempt back (common/jobs/refund-lost-run.ts).
 */

/** The exit code of a job process that stopped because its daemon fell silent. */
export const LAPSED_EXIT_CODE = 3;

/**
 * The silence after which a job process stops, and the age of the last accepted heartbeat after
 * which the daemon stops speaking for the node: half of the node timeout less a heartbeat period
 * each, so the job process is gone a heartbeat period before the scheduler can requeue its job.
 */
export function supervisionMs(nodeTimeoutMs: number, heartbeatMs: number): number {
  // The floor never binds for a configuration the worker accepts (node timeout ≥ 500 ms and ≥ 3
  // heartbeat periods give ≥ 167 ms); at 250 it left no margin at a 500 ms node timeout.
  return Math.max(100, Math.floor((nodeTimeoutMs - heartbeatMs) / 2));
}

/**
 * Calls `lapsed` once the daemon has been silent for `limitMs`. The check runs twice, the second
 * time after the event loop's poll phase: a job process whose loop was blocked has its daemon's
 * messages waiting in the pipe, and must read them before it decides the daemon is gone.
 */
/**
 * How often a job process looks at its daemon's silence. A quarter of the limit (437 ms at the
 * tests' 4 s node timeout) ate most of the heartbeat period the exit has to spare; 50 ms stays
 * under any heartbeat period the worker accepts (≥ 100 ms).
 */
const CHECK_MS = 50;

export function watchDaemon(limitMs: number, lapsed: (silentMs: number) => void): { heard(): void } {
  let last = performance.now();
  const silent = () => performance.now() - last;
  const check = () => {
    if (silent() < limitMs) return;
    setImmediate(() => {
      if (silent() >= limitMs) lapsed(silent());
    });
  };
  setInterval(check, Math.min(CHECK_MS, Math.max(10, Math.floor(limitMs / 4)))).unref();
  return {
    heard() {
      last = performance.now();
    },
  };
}

/** The daemon's side: whether the control plane accepted one of its heartbeats recently enough. */
export class HeartbeatLease {
  private last: number;

  constructor(
    private readonly limitMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.last = now();
  }

  /**
   * A heartbeat sent at `sentAt` (performance.now()) was accepted: the lease counts from the send,
   * which is before the API recorded it. An older heartbeat answered late moves nothing back.
   */
  accepted(sentAt: number): void {
    this.last = Math.max(this.last, sentAt);
  }

  get fresh(): boolean {
    return this.now() - this.last < this.limitMs;
  }
}
