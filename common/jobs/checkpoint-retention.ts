/**
 * A job's `workflow.keepCheckpoints`: once a newer checkpoint is recorded, the records beyond the
 * newest N are deleted and their (job, step) written to `checkpoint_deletions` in the same
 * statement; the files go after, in a sweep. A crash between the two leaves the row, and the next
 * sweep (any API process's) deletes the files: a record never names a missing file, and no
 * retired file stays forever.
 *
 * A checkpoint some job's spec names as its initialCheckpoint is kept: that job starts from it.
 * Against a submission naming it at the same moment: the rows to retire are locked first, and the
 * jobs naming them read in a later statement; the admission locks the row it names as it inserts
 * the job (the trigger of migration 20261128120000). Whichever locks first, the other sees it: a
 * row an admission holds is skipped (kept), and an admission after our lock is refused (the row
 * is gone).
 */
import type pg from 'pg';
import { checkpointDirKey, type CheckpointStore } from '../storage/checkpoint-store.js';

/** Checkpoint `c` is no job's initialCheckpoint (a range of jobs_initial_checkpoint_idx). */
const NAMED_BY_NO_JOB = `NOT EXISTS (SELECT 1 FROM jobs o
                    WHERE o.spec ? 'initialCheckpoint'
                      AND o.spec -> 'initialCheckpoint' ->> 'checkpointId' = c.id::text)`;

/**
 * The rows beyond the newest `$2` that no job names yet, locked: an admission naming one waits
 * until we are done. A row an admission holds is skipped (it is being named: kept if the admission
 * commits, else retired by the caller's retry), so retention never waits on admissions and cannot deadlock with a batch that locks
 * several checkpoints in its own order; rows already named are not locked at all, so submissions
 * from a checkpoint many jobs start from do not queue behind each record.
 */
const RETIRING = `
  FROM checkpoints c
 WHERE c.job_id = $1
   AND c.step < (SELECT min(step) FROM (SELECT step FROM checkpoints WHERE job_id = $1
                                          ORDER BY step DESC LIMIT $2) kept)
   AND ${NAMED_BY_NO_JOB}`;
const LOCK_RETIRING = `SELECT c.id ${RETIRING} ORDER BY c.step FOR UPDATE SKIP LOCKED`;
/** The same rows, whoever holds them: after our deletions, those left were skipped. */
const COUNT_RETIRING = `SELECT count(*)::int AS n ${RETIRING}`;

/** Of the locked rows, those no job starts from; this statement's snapshot sees any admission committed before our lock. */
const RETIRE = `
WITH gone AS (
  DELETE FROM checkpoints c
   WHERE c.id = ANY($1::uuid[])
     AND ${NAMED_BY_NO_JOB}
  RETURNING c.job_id, c.step
)
INSERT INTO checkpoint_deletions (job_id, step) SELECT job_id, step FROM gone`;

/**
 * Retires the job's checkpoints beyond its newest `keep`. `skipped`: rows it left because an
 * admission (or another retention) held them; the caller tries again once that has ended, since an
 * admission that rolls back names nothing and no later record of a finished job would retire them.
 */
export async function retireCheckpoints(
  pool: pg.Pool,
  jobId: string,
  keep: number,
): Promise<{ retired: number; skipped: number }> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const locked = await c.query<{ id: string }>(LOCK_RETIRING, [jobId, keep]);
    const retired = locked.rows.length
      ? ((await c.query(RETIRE, [locked.rows.map((r) => r.id)])).rowCount ?? 0)
      : 0;
    // After our own deletions: what is left beyond the newest `keep` and named by no job was held.
    const left = await c.query<{ n: number }>(COUNT_RETIRING, [jobId, keep]);
    await c.query('COMMIT');
    return { retired, skipped: left.rows[0]!.n };
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    c.release();
  }
}

/**
 * Deletes the files of up to `limit` retired checkpoints, then their rows; returns how many.
 * Rows another sweep holds are skipped, so API replicas sweep side by side. A file deletion that
 * fails leaves its row (and the rows after it) for the next sweep.
 */
export async function sweepRetiredCheckpoints(
  pool: pg.Pool,
  store: Pick<CheckpointStore, 'deleteDir'>,
  limit = 100,
): Promise<number> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const rows = await c.query<{ id: string; job_id: string; step: number }>(
      `SELECT id, job_id, step FROM checkpoint_deletions ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
    );
    const deleted: string[] = [];
    let failure: unknown = null;
    for (const row of rows.rows) {
      try {
        await store.deleteDir(checkpointDirKey(row.job_id, row.step));
      } catch (err) {
        failure = err;
        break;
      }
      deleted.push(row.id);
    }
    if (deleted.length)
      await c.query(`DELETE FROM checkpoint_deletions WHERE id = ANY($1::bigint[])`, [deleted]);
    await c.query('COMMIT');
    if (failure) throw failure;
    return deleted.length;
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    c.release();
  }
}
