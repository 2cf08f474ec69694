/**
 * Node liveness: a node whose heartbeats stopped for longer than the timeout is marked lost, and
 * every job it held goes back to the queue (attempt counted, reason `node_lost`) to resume from its
 * last committed checkpoint elsewhere. Its device leases lapse on their own in the lock service.
 */
import type { Redis } from 'ioredis';
import type pg from 'pg';
import type { Logger } from '../common/logger.js';
import type { SchedulerWake } from '../common/jobs/scheduler-wake.js';
import { requeueNodeJobs } from '../common/jobs/publish.js';
import type { RedisNames } from '../common/queues.js';

export async function sweepLostNodes(deps: {
  pool: pg.Pool;
  redis: Redis;
  names: RedisNames;
  wake: SchedulerWake;
  logger: Logger;
  timeoutMs: number;
  /** Test-only: `crash_after_node_lost` dies between marking a node lost and requeueing its jobs. */
  fault?: string;
}): Promise<number> {
  const { pool, logger } = deps;
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
