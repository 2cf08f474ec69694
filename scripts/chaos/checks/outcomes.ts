/** Every job the API accepted is kept, ends, and succeeds: the faults are all ones the system promises to survive. */
import type pg from 'pg';
import type { JobRec } from '../jobs.js';
import type { Violations } from '../violations.js';

/** The jobs table's rows, as the final checks read them. */
export interface JobRow {
  id: string;
  status: string;
  attempts: number;
  interruptions: number;
  max_attempts: number;
  error: string | null;
  progress_step: number | null;
}

export async function readJobRows(sql: pg.Pool): Promise<JobRow[]> {
  const r = await sql.query(
    `SELECT id, status, attempts, interruptions, max_attempts, last_error AS error, progress_step FROM jobs ORDER BY created_at`,
  );
  return r.rows as JobRow[];
}

/** After the drain: nothing is still queued or running. */
export async function checkJobsFinished(v: Violations, sql: pg.Pool, drainSeconds: number) {
  const open = await sql.query(
    `SELECT id, status, attempts FROM jobs WHERE status NOT IN ('succeeded','failed','cancelled')`,
  );
  if (open.rows.length)
    v.violate(
      'jobs_finish',
      `${open.rows.length} jobs not final ${drainSeconds} s after the faults: ${JSON.stringify(open.rows)}`,
    );
}

export function checkOutcomes(v: Violations, rows: readonly JobRow[], jobs: readonly JobRec[]): void {
  for (const j of jobs) {
    const row = rows.find((r) => r.id === j.id);
    v.count();
    if (!row) v.violate('job_kept', `job ${j.id} accepted (201) but not in the database`);
    else if (row.status !== 'succeeded')
      v.violate(
        'job_succeeds',
        `job ${j.id} (${j.spec.name}) ended ${row.status} after ${row.attempts} runs: ${row.error ?? ''}`,
      );
  }
  if (rows.length !== jobs.length)
    v.violate('job_kept', `${rows.length} jobs in the database, ${jobs.length} accepted`);
}
