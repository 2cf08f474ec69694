/**
 * Startup (and periodic) reconciliation between PostgreSQL and the queue. A job is committed before
 * it is enqueued, so a crash between the two — or Redis losing everything, since it keeps nothing on
 * disk here — can leave a queued job with no queue entry. Re-adding every queued job is safe because
 * entry ids are deterministic: existing entries are not duplicated.
 */
import type pg from 'pg';
import type { JobQueue } from './queue.js';

export async function reconcileQueue(pool: pg.Pool, queue: JobQueue, batch = 500): Promise<number> {
  let after = '00000000-0000-0000-0000-000000000000';
  let count = 0;
  for (;;) {
    const r = await pool.query(
      `SELECT id, tenant_id, queue_seq FROM jobs WHERE status = 'queued' AND id > $1 ORDER BY id LIMIT $2`,
      [after, batch],
    );
    if (r.rows.length === 0) return count;
    await Promise.all(
      r.rows.map((row) => queue.enqueue({ jobId: row.id, tenantId: row.tenant_id, queueSeq: row.queue_seq })),
    );
    count += r.rows.length;
    after = r.rows[r.rows.length - 1].id;
  }
}
