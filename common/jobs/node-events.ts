/**
 * Job events a node reports about decisions it took inside a job's placement (the reactive
 * balancer's moves, common/node-protocol/reports.ts). Guarded like every node report by the job
 * still being placed on the reporting node, in the reporting run. A `job.rebalanced` also records its new stage map in
 * the placement, in the same transaction: from then on the placement row says how the job runs,
 * so the scheduler costs it at that split (scheduler/rounds/read-snapshot.ts) and a node that
 * restarts the job runs it so.
 */
import { ApiError } from '../errors.js';
import type { InRun } from './reports.js';
import { isStageMapOf, withStageMap, type NodeJobEvent, type Placement } from '../node-protocol/index.js';

/**
 * Records the events inside the report's transaction (job-report.ts), which locked the job row for
 * the reporting run and read its placement; returns their ids.
 */
export async function recordNodeEvents(
  tx: InRun,
  jobId: string,
  stored: Placement,
  events: NodeJobEvent[],
): Promise<string[]> {
  let placement = withStageMap(stored);
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
      await tx.query(
        `UPDATE jobs SET placement = jsonb_set(placement, '{stages}', $2::jsonb) WHERE id = $1`,
        [jobId, JSON.stringify(e.stages)],
      );
    }
    const ins = await tx.query(
      `INSERT INTO job_events (job_id, type, data) VALUES ($1, $2, $3::jsonb) RETURNING id`,
      [jobId, type, JSON.stringify(data)],
    );
    ids.push(String(ins.rows[0].id));
  }
  return ids;
}
