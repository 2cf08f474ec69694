/**
 * Startup (and periodic) nudge: queued rows are the queue (common/jobs/queue.ts), so nothing needs
 * re-adding after a crash or a Redis wipe; a wake-up makes the leader look at once.
 */
import type pg from 'pg';
import type { JobQueue } from './queue.js';

export async function reconcileQueue(pool: pg.Pool, queue: JobQueue): Promise<number> {
  const r = await pool.query(`SELECT count(*)::int AS n FROM jobs WHERE status = 'queued'`);
  const n = r.rows[0].n as number;
  if (n > 0) await queue.wake();
  return n;
}
