/**
 * Since when the control plane could take heartbeats, as far as a scheduler can tell: a node's
 * silence counts only from then (liveness.ts). A heartbeat is a write to PostgreSQL through the API;
 * while PostgreSQL is down (or out of the scheduler's reach) no node can heartbeat, and the sweep's
 * own statements fail. A QA run stopped PostgreSQL for 25 s: the first sweep after it read every
 * node's `last_heartbeat_at` from before the outage and marked the whole (live) fleet lost within a
 * second, requeueing every job as `node_lost`.
 *
 * The clock holds the database's time of the first of an unbroken series of successful sweeps: a
 * failed sweep forgets it, and so does a scheduler process that starts (it cannot know what
 * happened before it, e.g. an outage it was restarted through). The sweep also reads the
 * database's own start (`pg_postmaster_start_time()`): a database restarted between two sweeps.
 * Counting silence from the latest of these is never earlier than counting it from the last
 * heartbeat, so it only ever delays a node's loss, never hastens it: a lost node's jobs stop
 * themselves a heartbeat period before its last accepted heartbeat is a node timeout old
 * (worker-node/supervision.ts), and are requeued no earlier than that, so a job still never runs on
 * two nodes at once. The price: a node that died during the outage (or just before a scheduler
 * started) is found lost one node timeout after the control plane is back.
 */
export class ControlPlaneClock {
  private since: Date | null = null;

  /** A sweep's statement failed: the control plane may not be taking heartbeats now. */
  failed(): void {
    this.since = null;
  }

  /** A sweep reached the database at its time `now`; returns since when it has at every try. */
  reached(now: Date): Date {
    return (this.since ??= now);
  }
}
