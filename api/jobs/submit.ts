/**
 * Submitting a job, whichever HTTP path carried it: validation, the initial checkpoint's ownership,
 * admission (grouped, or the single statement with an Idempotency-Key) and the enqueue. The Express
 * route and the fast path (api/http/submit-fast-path.ts) both call the one submitter of a process,
 * so they share its admission groups.
 */
import type { ServerResponse } from 'node:http';
import { z } from '../../common/zod.js';
import { ApiError } from '../../common/errors.js';
import {
  checkpointSpec,
  initialCheckpointConflict,
  jobSpecSchema,
  type JobSpec,
  type JobSpecInput,
} from '../../common/job-spec.js';
import { parseOrThrow } from '../http/validate.js';
import { notJsonBody } from '../http/json-body.js';
import { admitJob, noSuchCheckpoint, replayOf } from './admit.js';
import { AdmissionBatcher } from './admission-batcher.js';
import { serializeJob, type JobRecord } from './serialize.js';
import { sendJson } from '../http/send-json.js';
import type { ApiDeps } from '../deps.js';

export const idempotencyKeySchema = z.string().min(1).max(255);

export interface Submitted {
  job: JobRecord;
  /** An earlier request with the same Idempotency-Key created the job. */
  replayed: boolean;
}

export type SubmitJob = (
  tenantId: string,
  body: unknown,
  idempotencyKey: string | undefined,
) => Promise<Submitted>;

export function createSubmitter(deps: ApiDeps): SubmitJob {
  const { pool } = deps.db;

  /** What follows the commit of new jobs: count them and wake the scheduler (nothing here may throw). */
  async function afterCommit(jobs: JobRecord[]): Promise<void> {
    if (!jobs.length) return;
    if (deps.config.TIMESHARE_FAULT === 'crash_after_commit') process.kill(process.pid, 'SIGKILL');
    deps.metrics.jobsSubmitted.inc(jobs.length);
    // No event notification here: nobody can be watching a job whose id this response carries.
    // Committed: the jobs are queued rows, and the next round finds them without the wake-up, so it
    // is skipped while Redis is not ready and never waited for beyond a short bound (common/jobs/best-effort.ts).
    await deps.wake.wake();
  }

  const batcher = new AdmissionBatcher(pool, {
    maxBatch: 64,
    maxInFlight: 1,
    afterCommit,
    onAdmission: (size) => deps.metrics.admissionBatchSize.observe(size),
  });

  return async (tenantId, body, rawKey) => {
    // No parsed body: the fast path read none (json-body.ts refuses the rest before the route).
    if (body === undefined) throw notJsonBody(undefined, false);
    const requested = parseOrThrow(jobSpecSchema, body);
    let spec = requested;
    const idempotencyKey =
      rawKey === undefined ? null : parseOrThrow(idempotencyKeySchema, rawKey, 'Idempotency-Key');
    if (idempotencyKey) {
      // A retry replays what the first request created before anything it names is checked again
      // (its checkpoint may be gone since).
      const prior = await replayOf(pool, tenantId, idempotencyKey, requested);
      if (prior) return { job: prior.job, replayed: true };
    }
    if (requested.initialCheckpoint) {
      // The checkpoint's job, then the job each started from, back to the one whose engine was built
      // from its own spec: a job started from a checkpoint runs that checkpoint's model and task,
      // whatever its spec left out or (admitted before this check) said otherwise.
      const ck = await pool.query<{ spec: JobSpec }>(
        `WITH RECURSIVE source AS (
           SELECT j.spec, 0 AS depth FROM checkpoints c JOIN jobs j ON j.id = c.job_id
            WHERE c.id = $1 AND c.job_id = $2 AND j.tenant_id = $3
           UNION ALL
           SELECT p.spec, s.depth + 1 FROM source s
             JOIN jobs p ON p.id = (s.spec #>> '{initialCheckpoint,jobId}')::uuid AND p.tenant_id = $3
         )
         SELECT spec FROM source ORDER BY depth DESC LIMIT 1`,
        [requested.initialCheckpoint.checkpointId, requested.initialCheckpoint.jobId, tenantId],
      );
      if (!ck.rows[0]) throw noSuchCheckpoint();
      // Parsed, so the body is a spec as submitted: what it sets, before defaults.
      const conflict = initialCheckpointConflict((body as JobSpecInput).workflow, ck.rows[0].spec);
      if (conflict) throw new ApiError('invalid_request', conflict.message, conflict.param);
      // Stored as it runs, so that every reader of the spec sees the job that runs.
      spec = checkpointSpec(requested, ck.rows[0].spec);
    }
    if (!idempotencyKey) {
      // Enqueued by the batcher (afterCommit) before it answers.
      const { job } = await batcher.admit(tenantId, spec);
      return { job, replayed: false };
    }
    const admitted = await admitJob(pool, { tenantId, spec, requested, idempotencyKey });
    if (admitted.created) await afterCommit([admitted.job]);
    return { job: admitted.job, replayed: !admitted.created };
  };
}

/** The 201 for a submission, as both HTTP paths send it. */
export function sendSubmitted(res: ServerResponse, { job, replayed }: Submitted): void {
  if (replayed) res.setHeader('Idempotent-Replayed', 'true');
  sendJson(res, 201, serializeJob(job));
}
