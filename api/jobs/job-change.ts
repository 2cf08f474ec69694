/**
 * What a tenant's change to one of its jobs (pause, resume, priority) answers, from the row its
 * statement returns: `job` (the changed row, or the row as it was when nothing changed) and
 * `event_id` (null when nothing changed). No row: not the tenant's job (404). Unchanged and
 * finished: 409, since only a job that has not finished can change.
 */
import { ApiError, notFound } from '../../common/errors.js';
import { isFinal } from '../../common/job-status.js';
import { jobFromRow, type JobRecord } from './serialize.js';

export interface JobChange {
  job: JobRecord;
  /** The job event written; null when nothing changed. */
  eventId: string | null;
}

export function jobChange(
  row: { job: Record<string, unknown>; event_id: string | number | null } | undefined,
): JobChange {
  if (!row) throw notFound('job');
  const job = jobFromRow(row.job);
  if (row.event_id === null && isFinal(job.status))
    throw new ApiError('conflict', `job already finished with status ${job.status}`);
  return { job, eventId: row.event_id === null ? null : String(row.event_id) };
}
