/**
 * Job state transitions after submission (submission and cancel live in api/jobs/). Each is one SQL
 * statement — the row change, the quota counters and the event rows commit together — guarded by
 * the state it expects and, for reports from a node, by `node_id` and the run (`queue_seq`): a node
 * that lost a job (it was requeued after a missed heartbeat) can no longer move it, nor can a late
 * report of an earlier run move the run placed now, on whichever node. A guard that fails returns
 * null and changes nothing. Callers publish the returned event ids after the commit.
 *
 *   queued ─place (scheduler/rounds/apply-decisions.ts)→ placed ─start→ running ─finish→ succeeded | failed
 *   placed | running ─requeue(preempted | node_lost | crashed | drained)→ queued   (or failed once
 *   a crash exhausts maxAttempts: runs, less those the scheduler preempted; a run that crashed
 *   before it started, still `placed`, counts too)
 */
import type pg from 'pg';
import type { FinishReason } from '../node-protocol/index.js';

export interface Transitioned {
  job: Record<string, unknown> & {
    id: string;
    tenant_id: string;
    queue_seq: number;
    status: string;
    node_id: string | null;
  };
  eventIds: string[];
}

async function one(pool: pg.Pool, sql: string, params: unknown[]): Promise<Transitioned | null> {
  const r = await pool.query(sql, params);
  const row = r.rows[0];
  if (!row) return null;
  const eventIds = ((row.event_ids as (string | number)[] | null) ?? []).map(String);
  delete row.event_ids;
  return { job: row, eventIds };
}

export type { Placement } from '../node-protocol/index.js';

/**
 * The run a node report is about: `queueSeq` of the assignment that started it; null only for the
 * control plane's own callers, which act on the row as it is (the scheduler requeueing a lost node).
 */
export type RunSeq = number | null;
const THIS_RUN = (param: string) => `(${param}::int IS NULL OR queue_seq = ${param}::int)`;

/**
 * The runs that count toward `maxAttempts`, as `GET /v1/jobs/{id}` reports them (`countedAttempts`,
 * api/jobs/serialize.ts), of the row a statement returns. Events carry it beside `attempt` (every
 * run): a webhook consumer reading `attempt` 6 next to `maxAttempts` 3 took the job for past its
 * last attempt when preemptions and drains had used none.
 */
const COUNTED_ATTEMPTS = 'GREATEST(attempts - interruptions, 0)';

/**
 * placed → running on the node it was placed on; counts an attempt, and the run's minimum run time
 * starts. The error of an earlier run (a crash, a lost node) is cleared: `error` is what ended the
 * job's last run, and a running job showed the one its previous run had ended with. Cleared here and
 * not at placement: a placement is not yet a run (one interrupted before it starts uses no attempt,
 * and the job waits again for the same reason), and the run's own end sets the error anew, so a
 * final `failed` keeps the error that failed it.
 */
export function startJob(
  pool: pg.Pool,
  jobId: string,
  nodeId: string,
  queueSeq: RunSeq,
  resumedFromStep: number | null,
) {
  return one(
    pool,
    `WITH j AS (
       UPDATE jobs SET status = 'running', attempts = attempts + 1, started_at = coalesce(started_at, now()),
                       run_started_at = now(), updated_at = now(), last_error = NULL,
                       -- The run goes on from the step it resumed from (0: from the start).
                       progress_step = coalesce($3::int, 0), progress_at = now(), pace_step = NULL, pace_at = NULL
        WHERE id = $1 AND node_id = $2 AND ${THIS_RUN('$4')} AND status = 'placed'
       RETURNING *
     ), e AS (
       INSERT INTO job_events (job_id, type, data)
       SELECT id, 'job.running', jsonb_build_object('status', 'running', 'attempt', attempts,
                                                   'countedAttempts', ${COUNTED_ATTEMPTS}, 'maxAttempts', max_attempts,
                                                   'nodeId', node_id, 'resumedFromStep', $3::int) FROM j
       RETURNING id
     )
     SELECT j.*, (SELECT array_agg(id) FROM e) AS event_ids FROM j`,
    [jobId, nodeId, resumedFromStep, queueSeq],
  );
}

/** An event's `runEndedAt` from the query parameter `p` (text or null): nothing when null. */
const RUN_ENDED_AT = (p: string) =>
  `CASE WHEN ${p}::text IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('runEndedAt', ${p}::text) END`;

/**
 * running → succeeded | failed; frees the active-job and device counters. A success says why the
 * run ended where it did (`reason`, from the node: its steps done, or a target met first; null
 * from a daemon too old to say), on the job and in its `job.succeeded` event.
 */
export function finishJob(
  pool: pg.Pool,
  jobId: string,
  nodeId: string,
  queueSeq: RunSeq,
  status: 'succeeded' | 'failed',
  error: string | null,
  reason: FinishReason | null = null,
  /** When the run ended by its node's clock (`runEndedAt` in the event), if the node said. */
  runEndedAt: string | null = null,
) {
  return one(
    pool,
    `WITH prev AS (
       SELECT id, devices, tenant_id FROM jobs
        WHERE id = $1 AND node_id = $2 AND ${THIS_RUN('$5')} AND status IN ('placed', 'running') FOR UPDATE
     ), j AS (
       UPDATE jobs SET status = $3::"JobStatus", last_error = $4, finish_reason = $6, finished_at = now(),
                       updated_at = now()
         FROM prev WHERE jobs.id = prev.id
       RETURNING jobs.*
     ), q AS (
       UPDATE quotas SET active_jobs = GREATEST(active_jobs - 1, 0),
                         active_devices = GREATEST(active_devices - prev.devices, 0)
         FROM prev WHERE quotas.tenant_id = prev.tenant_id
     ), e AS (
       INSERT INTO job_events (job_id, type, data)
       SELECT id, 'job.' || $3, jsonb_build_object('status', $3::text, 'error', $4::text)
              || CASE WHEN $3 = 'succeeded' THEN jsonb_build_object('reason', $6::text) ELSE '{}' END
              || ${RUN_ENDED_AT('$7')} FROM j
       RETURNING id
     )
     SELECT j.*, (SELECT array_agg(id) FROM e) AS event_ids FROM j`,
    [jobId, nodeId, status, error, queueSeq, status === 'succeeded' ? reason : null, runEndedAt],
  );
}

export type RequeueReason = 'preempted' | 'node_lost' | 'crashed' | 'drained' | 'lost_contact';

/**
 * Runs the platform ended that are not the job's to answer for: the scheduler's preemption, a
 * drain, a daemon that lost the control plane and stopped its job. They use none of the job's
 * `maxAttempts`. A lost node's runs do: a job that takes its node down would otherwise take down
 * every node in turn, and from the control plane a node's crash and a job's look the same.
 */
export const interruptedRuns: readonly RequeueReason[] = ['preempted', 'drained', 'lost_contact'];
const INTERRUPTED = `(${interruptedRuns.map((r) => `'${r}'`).join(', ')})`;

/**
 * placed | running → queued with a fresh queue entry id (queue_seq + 1), or → failed when a crash
 * used the last attempt. `nodeId` and `queueSeq` null skip the node and run guards (the scheduler
 * requeueing a lost node).
 */
export function requeueJob(
  pool: pg.Pool,
  jobId: string,
  nodeId: string | null,
  queueSeq: RunSeq,
  reason: RequeueReason,
  error: string | null,
  /** When the run ended by its node's clock (`runEndedAt` in the events), if the node said. */
  runEndedAt: string | null = null,
) {
  return one(
    pool,
    `WITH prev AS (
       SELECT id, devices, tenant_id, attempts, max_attempts, interruptions, node_id, queue_seq AS ended_run, preempt_reason, status FROM jobs
        WHERE id = $1 AND ($2::uuid IS NULL OR node_id = $2) AND ${THIS_RUN('$5')}
          AND status IN ('placed', 'running') FOR UPDATE
     ), counted AS (
       -- A run counts at its start (startJob); one that crashed before it started (its engine could
       -- not be built, its checkpoint not read) is a run too: uncounted, it was retried forever.
       SELECT prev.*, attempts + CASE WHEN $3 = 'crashed' AND status = 'placed' THEN 1 ELSE 0 END AS runs FROM prev
     ), verdict AS (
       -- maxAttempts is the runs a crashing job gets: runs the platform interrupted are not the
       -- job's, and counting them failed a job preempted (or drained) twice on its first crash.
       SELECT counted.*, ($3 = 'crashed' AND runs - interruptions >= max_attempts) AS exhausted FROM counted
     ), j AS (
       UPDATE jobs SET
         attempts = v.runs,
         status = CASE WHEN v.exhausted THEN 'failed'::"JobStatus" ELSE 'queued'::"JobStatus" END,
         queue_seq = CASE WHEN v.exhausted THEN queue_seq ELSE queue_seq + 1 END,
         node_id = NULL, placement = NULL, last_error = coalesce($4, last_error),
         queued_at = now(), requeue_reason = $3, preempt_requested_at = NULL, preempt_reason = NULL,
         preemptions = jobs.preemptions + CASE WHEN $3 = 'preempted' THEN 1 ELSE 0 END,
         -- Only a run that started used an attempt (startJob) to give back: one interrupted while
         -- still placed is in neither count (counted, it made interruptions outgrow attempts).
         interruptions = jobs.interruptions + CASE WHEN $3 IN ${INTERRUPTED} AND v.status = 'running' THEN 1 ELSE 0 END,
         -- Back from a lost or draining node, nothing says yet why it waits: the next round does.
         wait_reason = CASE WHEN v.exhausted THEN NULL WHEN $3 = 'crashed' THEN 'crash_loop'
                            WHEN $3 = 'preempted' THEN 'preempted' ELSE NULL END,
         finished_at = CASE WHEN v.exhausted THEN now() ELSE NULL END,
         updated_at = now()
         FROM verdict v WHERE jobs.id = v.id
       RETURNING jobs.*, v.exhausted, v.node_id AS from_node, v.ended_run, v.preempt_reason AS notice_reason
     ), q AS (
       UPDATE quotas SET active_devices = GREATEST(active_devices - prev.devices, 0),
                         active_jobs = active_jobs - CASE WHEN (SELECT exhausted FROM j) THEN 1 ELSE 0 END
         FROM prev WHERE quotas.tenant_id = prev.tenant_id
     ), e AS (
       INSERT INTO job_events (job_id, type, data)
       -- A run that stopped for a notice withdrawn too late for it (scheduler/core/withdraw.ts: its
       -- checkpoint had begun) left for that notice's reason, not an admin's.
       SELECT id, 'job.preempted', jsonb_build_object('status', 'preempted', 'nodeId', from_node,
                                                      'reason', coalesce(notice_reason, (
           SELECT w.data->>'reason' FROM job_events w
            WHERE w.job_id = j.id AND w.type = 'job.preempt_withdrawn'
              AND w.data->>'queueSeq' = j.ended_run::text
            ORDER BY w.id DESC LIMIT 1), 'admin')) || ${RUN_ENDED_AT('$6')}
         FROM j WHERE $3 = 'preempted'
       UNION ALL
       SELECT id, CASE WHEN exhausted THEN 'job.failed' ELSE 'job.queued' END,
              jsonb_build_object('status', CASE WHEN exhausted THEN 'failed' ELSE 'queued' END, 'reason', $3::text,
                                 'attempt', attempts, 'countedAttempts', ${COUNTED_ATTEMPTS}, 'maxAttempts', max_attempts,
                                 'error', $4::text, 'nodeId', from_node,
                                 'queueSeq', ended_run) || ${RUN_ENDED_AT('$6')}
         FROM j
       RETURNING id
     )
     SELECT j.*, (SELECT array_agg(id ORDER BY id) FROM e) AS event_ids FROM j`,
    [jobId, nodeId, reason, error, queueSeq, runEndedAt],
  );
}

/** Jobs a node holds (placed or running): what a lost node's sweep requeues. */
export async function jobsOnNode(pool: pg.Pool, nodeId: string): Promise<string[]> {
  const r = await pool.query(`SELECT id FROM jobs WHERE node_id = $1 AND status IN ('placed', 'running')`, [
    nodeId,
  ]);
  return r.rows.map((row) => row.id as string);
}
