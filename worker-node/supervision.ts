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
 * most 2 × `supervisionMs` = node timeout − heartbeat period after the last accepted heartbeat. It
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
  return Math.max(250, Math.floor((nodeTimeoutMs - heartbeatMs) / 2));
}

/**
 * Calls `lapsed` once the daemon has been silent for `limitMs`. The check runs twice, the second
 * time after the event loop's poll phase: a job process whose loop was blocked has its daemon's
 * messages waiting in the pipe, and must read them before it decides the daemon is gone.
 */
export function watchDaemon(limitMs: number, lapsed: (silentMs: number) => void): { heard(): void } {
  let last = performance.now();
  const silent = () => performance.now() - last;
  const check = () => {
    if (silent() < limitMs) return;
    setImmediate(() => {
      if (silent() >= limitMs) lapsed(silent());
    });
  };
  setInterval(check, Math.max(50, Math.floor(limitMs / 4))).unref();
  return {
    heard() {
      last = performance.now();
    },
  };
}

/** The daemon's side: whether the control plane accepted one of its heartbeats recently enough. */
export class HeartbeatLease {
  private last = performance.now();

  constructor(private readonly limitMs: number) {}

  /** A heartbeat (or the registration) was accepted just now. */
  accepted(): void {
    this.last = performance.now();
  }

  get fresh(): boolean {
    return performance.now() - this.last < this.limitMs;
  }
}
