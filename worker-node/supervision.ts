/**
 * A job never runs unsupervised, nor after the control plane may have given it to another node. A
 * daemon that died closes the IPC channel and its job processes exit at once (job-runner.ts). A
 * daemon that is paused (SIGSTOP, a VM stopped, a hung event loop) closes nothing, and one cut off
 * from the API (a network partition that leaves Redis and the checkpoint store reachable) is alive
 * and well: either way its heartbeats stop reaching the API, and the scheduler gives its jobs to
 * other nodes after the node timeout. Its job processes must be gone by then, or the job runs twice
 * and both runs write the same checkpoint directories. So each job process runs to a deadline the
 * daemon sets: 2 × `supervisionMs` (node timeout − heartbeat period) after the send of the last
 * heartbeat the API accepted, plus one check of the job process's watch (≤ CHECK_MS). The daemon
 * passes it on (`alive`, with the time left) as soon as a heartbeat is accepted and every
 * `supervisionMs / 4` besides; a daemon that stops speaking leaves its job processes the deadline
 * it last gave. The deadline counts from when the heartbeat was sent, not answered: the API
 * records it in between, so the deadline never outlives the record (counted from the answer, the
 * margin at the tests' 4 s node timeout and 500 ms heartbeat was ~60 ms, gone under load). And a
 * heartbeat retried while the API was away counts from the send of the try it answered.
 *
 * Before the deadline, the daemon stopped speaking once its last accepted heartbeat was
 * `supervisionMs` old and a job process stopped after `supervisionMs` of silence: the same bound,
 * but at the default 15 s timeout and 5 s heartbeat the lease was one heartbeat long, so a single
 * heartbeat answered ~4 s late (an API restart, a stall of a few seconds) stopped every job on the
 * node ("daemon silent for 5016 ms", a QA pass) with the node nowhere near its timeout.
 *
 * A job process that runs out exits with `LAPSED_EXIT_CODE`, and the daemon, once it is back,
 * reports the run as `lost_contact`: the platform's doing, not the job's, so it uses none of the
 * job's attempts. If the scheduler found the node lost meanwhile, it requeued the run as
 * `node_lost`, which used an attempt; the report then gives the attempt back
 * (common/jobs/refund-lost-run.ts).
 */

/** The exit code of a job process that stopped because its daemon fell silent. */
export const LAPSED_EXIT_CODE = 3;

/**
 * Half of what a job process may run past the send of the last accepted heartbeat: twice this is
 * the node timeout less a heartbeat period, so the job process is gone a heartbeat period before
 * the scheduler can requeue its job.
 */
export function supervisionMs(nodeTimeoutMs: number, heartbeatMs: number): number {
  // The floor never binds for a configuration the worker accepts (node timeout ≥ 500 ms and ≥ 3
  // heartbeat periods give ≥ 167 ms); at 250 it left no margin at a 500 ms node timeout.
  return Math.max(100, Math.floor((nodeTimeoutMs - heartbeatMs) / 2));
}

/**
 * The delays between a heartbeat's tries: evenly within one heartbeat period (a fifth of it, at
 * most a second), after which the next heartbeat takes over. The client's backoff (up to 8 s between
 * tries) sent the first try after an API restart up to 4 s after the API was back: past the jobs'
 * deadline at the defaults.
 */
export function heartbeatRetryDelays(heartbeatMs: number): number[] {
  const every = Math.min(1000, Math.max(20, Math.floor(heartbeatMs / 5)));
  return Array.from({ length: Math.max(0, Math.ceil(heartbeatMs / every) - 1) }, () => every);
}

/**
 * How often a job process looks at its deadline. A quarter of the limit (437 ms at the tests' 4 s
 * node timeout) ate most of the heartbeat period the exit has to spare; 50 ms stays under any
 * heartbeat period the worker accepts (≥ 100 ms).
 */
const CHECK_MS = 50;

/**
 * A job process's watch: `lapsed` is called once the deadline passes, `forMs` from now at first and
 * as each `alive` sets it. The check runs twice, the second time after the event loop's poll
 * phase: a job process whose loop was blocked has its daemon's messages waiting in the pipe, and
 * must read them before it decides its time is up.
 */
export function watchDaemon(
  forMs: number,
  lapsed: (sinceWordMs: number) => void,
): { until(forMs: number): void } {
  let heard = performance.now();
  let deadline = heard + forMs;
  const check = () => {
    if (performance.now() < deadline) return;
    setImmediate(() => {
      if (performance.now() >= deadline) lapsed(performance.now() - heard);
    });
  };
  setInterval(check, CHECK_MS).unref();
  return {
    until(ms: number) {
      heard = performance.now();
      deadline = heard + ms;
    },
  };
}

/** The daemon's side: when the control plane last accepted one of its heartbeats, so how long its jobs may run. */
export class HeartbeatLease {
  private last: number;

  constructor(
    private readonly limitMs: number,
    private readonly now: () => number = () => performance.now(),
    /** The send of the accepted registration (a heartbeat too); default now. */
    since: number = now(),
  ) {
    this.last = since;
  }

  /**
   * A heartbeat sent at `sentAt` (performance.now()) was accepted: the lease counts from the send,
   * which is before the API recorded it. An older heartbeat answered late moves nothing back.
   */
  accepted(sentAt: number): void {
    this.last = Math.max(this.last, sentAt);
  }

  /** How long a job process may still run: to 2 × the limit after that send (≤ 0: stop now). */
  runForMs(): number {
    return this.last + 2 * this.limitMs - this.now();
  }
}
