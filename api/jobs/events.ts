/**
 * Job events: a row in job_events (committed with the change it describes), then a notification on
 * Redis so that live SSE streams wake up. The row is the truth; a lost notification only delays a
 * stream until its next poll.
 */
import type pg from 'pg';

export interface EventRow {
  id: string;
  type: string;
  data: Record<string, unknown>;
  createdAt: string;
}

export async function listEvents(
  pool: pg.Pool,
  jobId: string,
  afterId: bigint | number,
  limit: number,
): Promise<EventRow[]> {
  const r = await pool.query(
    'SELECT id, type, data, created_at FROM job_events WHERE job_id = $1 AND id > $2 ORDER BY id LIMIT $3',
    [jobId, String(afterId), limit],
  );
  return r.rows.map((row) => ({
    id: String(row.id),
    type: row.type,
    data: row.data,
    createdAt: (row.created_at as Date).toISOString(),
  }));
}
