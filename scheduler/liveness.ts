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
}): Promise<number> {
  const { pool, logger } = deps;
  const lost = await pool.query(
    `UPDATE nodes SET status = 'lost'
      WHERE status <> 'lost' AND last_heartbeat_at < now() - make_interval(secs => $1::float8 / 1000)
     RETURNING id, name`,
    [deps.timeoutMs],
  );
  let requeued = 0;
  for (const node of lost.rows) {
    logger.warn({ nodeId: node.id, name: node.name }, 'node lost: heartbeats stopped');
    requeued += await requeueNodeJobs(deps, node.id, 'node_lost', `node ${node.name} stopped heartbeating`);
  }
  return requeued;
}
