/**
 * A job never runs unsupervised, even when its daemon is alive but silent. A daemon that died
 * closes the IPC channel and its job processes exit at once (job-runner.ts); a daemon that is
 * paused (SIGSTOP, a VM stopped, a hung event loop) closes nothing, stops heartbeating, and the
 * scheduler gives its jobs to other nodes after the node timeout. Its job processes must be gone by
 * then, or the job runs twice and both runs write the same checkpoint directories. So the daemon
 * tells each job process it is alive every `supervisionMs / 4`, and a job process that has not heard
 * from it for `supervisionMs` exits (the daemon, if it wakes, reports that as a crash; by then the
 * job is usually queued or running elsewhere and the report is refused).
 */

/**
 * The silence after which a job process stops: half of what is left of the node timeout once the
 * daemon's last heartbeat may be a heartbeat interval old, so the job process is gone well before
 * the scheduler can requeue its job.
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
