/**
 * Job events a node reports about decisions it took inside a job's placement (the reactive
 * balancer's moves, common/node-protocol/reports.ts). Guarded like every node report by the job
 * still being placed on the reporting node. A `job.rebalanced` also records its new stage map in
 * the placement, in the same transaction: from then on the placement row says how the job runs,
 * so the scheduler costs it at that split (scheduler/rounds/read-snapshot.ts) and a node that
 * restarts the job runs it so.
 */
import type pg from 'pg';
import { ApiError } from '../errors.js';
import { isStageMapOf, withStageMap, type NodeJobEvent, type Placement } from '../node-protocol/index.js';

/** Records the events; returns their ids (empty when the job is no longer on the node). */
export async function recordNodeEvents(
  pool: pg.Pool,
  jobId: string,
  nodeId: string,
  events: NodeJobEvent[],
): Promise<string[]> {
  if (!events.length) return [];
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const row = await client.query(
      `SELECT placement FROM jobs WHERE id = $1 AND node_id = $2 AND status IN ('placed', 'running') FOR UPDATE`,
      [jobId, nodeId],
    );
    if (!row.rows[0]) {
      await client.query('ROLLBACK');
      return [];
    }
    let placement = withStageMap(row.rows[0].placement as Placement);
    const ids: string[] = [];
    for (const e of events) {
      const { type, ...data } = e;
      if (e.type === 'job.rebalanced') {
        if (!isStageMapOf(placement, e.stages))
          throw new ApiError(
            'invalid_request',
            `stages must split the placement's own devices as its mode (${placement.mode}) allows`,
            'events',
          );
        placement = { ...placement, stages: e.stages };
        await client.query(
          `UPDATE jobs SET placement = jsonb_set(placement, '{stages}', $2::jsonb) WHERE id = $1`,
          [jobId, JSON.stringify(e.stages)],
        );
      }
      const ins = await client.query(
        `INSERT INTO job_events (job_id, type, data) VALUES ($1, $2, $3::jsonb) RETURNING id`,
        [jobId, type, JSON.stringify(data)],
      );
      ids.push(String(ins.rows[0].id));
    }
    await client.query('COMMIT');
    return ids;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
