/**
 * How the control plane applies one report record of a node, whichever route brought it: the
 * single routes (`POST /v1/nodes/{id}/jobs/{jobId}/start|report|checkpoints|finish`) and the batch
 * (`POST /v1/nodes/{id}/reports`, report-batch.ts) run the same guards through this. What follows a
 * commit (events announced, the scheduler woken, retired checkpoints deleted) is handed back as
 * `announce`, for the caller to run once the record's transaction has committed: a batch commits
 * several records at once.
 */
import type pg from 'pg';
import { ApiError } from '../../common/errors.js';
import { applyJobReport } from '../../common/jobs/job-report.js';
import { finishLateSuccess } from '../../common/jobs/late-success.js';
import { publishEvents, publishTransition } from '../../common/jobs/publish.js';
import { refundLostRun } from '../../common/jobs/refund-lost-run.js';
import { recordCheckpoint } from '../../common/jobs/reports.js';
import { finishJob, requeueJob, startJob } from '../../common/jobs/transitions.js';
import { isRequeueOutcome, type ReportRecord } from '../../common/node-protocol/index.js';
import { checkpointModelKey } from '../../common/storage/index.js';
import type { ApiDeps } from '../deps.js';

/** A record without the version it was written in: what applying it needs (it was raised to this one). */
export type RecordToApply = ReportRecord extends infer R
  ? R extends unknown
    ? Omit<R, 'protocol'>
    : never
  : never;

export interface AppliedRecord {
  applied: boolean;
  /** A checkpoint record's: the record it made. */
  checkpointId?: string | null;
  /** What follows the commit; runs once the record's transaction committed. */
  announce: () => Promise<unknown>;
}

/**
 * Applies `record` of node `nodeId` through `pool` (the API's, or a batch's transaction:
 * flat-transaction.ts). A record the node may not make throws an `ApiError` (a 4xx); one about a
 * job not placed on this node in the run it names is `applied: false` and changes nothing.
 */
export async function applyRecord(
  deps: ApiDeps,
  pool: pg.Pool,
  nodeId: string,
  record: RecordToApply,
): Promise<AppliedRecord> {
  const { jobId } = record;
  const publish = { ...deps, pool: deps.db.pool };
  switch (record.kind) {
    case 'start': {
      const { queueSeq, resumedFromStep } = record.body;
      const t = await startJob(pool, jobId, nodeId, queueSeq, resumedFromStep);
      return { applied: t !== null, announce: () => publishTransition(publish, t) };
    }
    case 'report': {
      const { applied, eventIds } = await applyJobReport(pool, jobId, nodeId, record.body);
      return { applied, announce: () => publishEvents(publish, jobId, eventIds) };
    }
    case 'checkpoint': {
      const body = record.body;
      // The key is the control plane's (job, step); a node that names any other place is refused
      // rather than silently corrected, so a misbehaving node shows up in its error responses.
      if (body.storageKey !== undefined && body.storageKey !== checkpointModelKey(jobId, body.step))
        throw new ApiError(
          'invalid_request',
          `storageKey must be ${checkpointModelKey(jobId, body.step)} (the job's own checkpoint of that step)`,
          'storageKey',
        );
      // A late record of the run just before the job's current one is taken only if its file is there.
      const rec = await recordCheckpoint(
        pool,
        jobId,
        nodeId,
        body,
        async (key) => (await deps.storage.size(key)) !== null,
      );
      return {
        applied: rec !== null,
        checkpointId: rec?.id ?? null,
        announce: async () => {
          if (rec) await publishEvents(publish, jobId, rec.eventIds);
          // After the record commits: a failure here leaves the older checkpoints to the next record.
          if (rec?.keepCheckpoints) await deps.retiredCheckpoints.retire(jobId, rec.keepCheckpoints);
        },
      };
    }
    case 'finish': {
      const { queueSeq, outcome, error, reason } = record.body;
      // By the node's clock, which is trusted with its jobs' times but not with the future.
      const endedAt =
        record.body.endedAt === null ? null : new Date(Math.min(Date.parse(record.body.endedAt), Date.now()));
      const runEndedAt = endedAt?.toISOString() ?? null;
      let t = isRequeueOutcome(outcome)
        ? await requeueJob(pool, jobId, nodeId, queueSeq, outcome, error, runEndedAt)
        : await finishJob(pool, jobId, nodeId, queueSeq, outcome, error, reason, runEndedAt);
      // The scheduler may have found the node lost first: the run is requeued. A success still stands
      // while the job waits for its next run (late-success.ts); otherwise this report shows its node
      // was alive, and whether the run ended by the job's fault (refund-lost-run.ts).
      if (!t && outcome === 'succeeded')
        t = await finishLateSuccess(pool, jobId, nodeId, queueSeq, reason ?? null);
      if (!t) t = await refundLostRun(pool, jobId, nodeId, queueSeq, outcome);
      const done = t;
      return { applied: done !== null, announce: () => publishTransition(publish, done) };
    }
  }
}
