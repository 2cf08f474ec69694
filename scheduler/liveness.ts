/**
 * Node liveness: a node whose heartbeats stopped for longer than the timeout is marked lost, and
 * every job it held goes back to the queue (attempt counted, reason `node_lost`) to resume from its
 * last committed checkpoint elsewhere. Its device leases lapse on their own in the lock service.
 * Silence counts only while the control plane could take heartbeats (liveness-clock.ts): for a
 * node timeout after the database comes back (a failed sweep, a restarted database, a scheduler
 * just started) nobody is marked lost, so the fleet's heartbeats resume first. Likewise for the
 * API: a node's silence counts only from the start of the unbroken run of an API instance present
 * now (common/api-presence.ts); with no API instance present nobody is marked lost.
 */
import type { Redis } from 'ioredis';
import type pg from 'pg';
import type { Logger } from '../common/logger.js';
import type { SchedulerWake } from '../common/jobs/scheduler-wake.js';
import { requeueNodeJobs } from '../common/jobs/publish.js';
import type { RedisNames } from '../common/queues.js';
import type { ControlPlaneClock } from './liveness-clock.js';
import { PRESENCE_STALE_PERIODS } from '../common/api-presence.js';

export async function sweepLostNodes(deps: {
  pool: pg.Pool;
  redis: Redis;
  names: RedisNames;
  wake: SchedulerWake;
  logger: Logger;
  timeoutMs: number;
  /** Test-only: `crash_after_node_lost` dies between marking a node lost and requeueing its jobs. */
  fault?: string;
  /**
   * Since when this scheduler has reached the database at every sweep (liveness-clock.ts); the
   * scheduler keeps one across its sweeps. Without it only the database's own start counts.
   */
  clock?: ControlPlaneClock;
}): Promise<number> {
  try {
    return await sweep(deps);
  } catch (err) {
    deps.clock?.failed();
    throw err;
  }
}

async function sweep(deps: Parameters<typeof sweepLostNodes>[0]): Promise<number> {
  const { pool, logger } = deps;
  // Since when heartbeats could be taken: the database's start, this scheduler's unbroken run of
  // sweeps, and the unbroken run of an API instance present now (the earliest such run: any one
  // instance takes heartbeats). Until a node timeout has passed since then, no silence is long enough.
  const at = await pool.query(
    `SELECT now() AS now, pg_postmaster_start_time() AS db_started,
            (SELECT min(present_since) FROM api_presence
              WHERE last_seen_at >= now() - make_interval(secs => $1 * period_ms / 1000.0)) AS api_since`,
    [PRESENCE_STALE_PERIODS],
  );
  const now = at.rows[0].now as Date;
  const dbStarted = at.rows[0].db_started as Date;
  const apiSince = at.rows[0].api_since as Date | null;
  const reached = deps.clock?.reached(now) ?? dbStarted;
  if (!apiSince) {
    logger.debug('liveness: no API instance present, so no node can heartbeat');
    return 0;
  }
  const upSince = Math.max(reached.getTime(), dbStarted.getTime(), apiSince.getTime());
  if (now.getTime() - upSince < deps.timeoutMs) {
    logger.debug({ upSince: new Date(upSince) }, 'liveness: control plane back less than a node timeout ago');
    return 0;
  }
  const lost = await pool.query(
    `UPDATE nodes SET status = 'lost'
      WHERE status <> 'lost' AND last_heartbeat_at < now() - make_interval(secs => $1::float8 / 1000)
     RETURNING id, name`,
    [deps.timeoutMs],
  );
  for (const node of lost.rows)
    logger.warn({ nodeId: node.id, name: node.name }, 'node lost: heartbeats stopped');
  if (deps.fault === 'crash_after_node_lost' && lost.rows.length) process.kill(process.pid, 'SIGKILL');
  // Every lost node that still holds jobs, not only those lost just now: this sweep may have died
  // before requeueing, and nothing else would. Only once the node has been silent for the timeout:
  // an admin's release marks a node lost at once, and a daemon of its old key may still be running
  // their processes, which stop themselves within that time (worker-node/supervision.ts).
  const holding = await pool.query(
    `SELECT DISTINCT n.id, n.name FROM nodes n JOIN jobs j ON j.node_id = n.id
      WHERE n.status = 'lost' AND j.status IN ('placed', 'running')
        AND n.last_heartbeat_at < now() - make_interval(secs => $1::float8 / 1000)`,
    [deps.timeoutMs],
  );
  let requeued = 0;
  for (const node of holding.rows)
    requeued += await requeueNodeJobs(deps, node.id, 'node_lost', `node ${node.name} stopped heartbeating`);
  return requeued;
}
