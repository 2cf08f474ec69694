/**
 * Leader election with fencing, on PostgreSQL: one row in `scheduler_leases`. A scheduler holds it
 * while it renews within the lease; a standby takes it once it has lapsed, and the epoch grows with
 * every change of holder. Every decision the leader writes carries its epoch, and the database
 * (trigger `jobs_scheduler_fence`, migration …_scheduler_fencing) refuses a decision whose epoch is
 * not the current lease's: a leader that was paused past its lease and wakes up cannot place,
 * preempt or take back anything, whatever it believes.
 */
import type pg from 'pg';

export const LEASE_NAME = 'scheduler';

export interface Leadership {
  epoch: number;
  /** When the lease lapses unless renewed (database clock, ms). */
  expiresAt: number;
}

/**
 * Takes or renews the lease for `holder`. Returns the epoch held, or null when another holder's
 * lease is still live.
 */
export async function acquireLease(
  pool: pg.Pool,
  holder: string,
  leaseMs: number,
): Promise<Leadership | null> {
  const r = await pool.query(
    `INSERT INTO scheduler_leases (name, holder, epoch, expires_at, renewed_at)
     VALUES ($1, $2, 1, clock_timestamp() + make_interval(secs => $3::float8 / 1000), clock_timestamp())
     ON CONFLICT (name) DO UPDATE SET
       epoch = scheduler_leases.epoch + CASE WHEN scheduler_leases.holder = EXCLUDED.holder THEN 0 ELSE 1 END,
       holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at, renewed_at = EXCLUDED.renewed_at
     WHERE scheduler_leases.holder = EXCLUDED.holder OR scheduler_leases.expires_at < clock_timestamp()
     RETURNING epoch, expires_at`,
    [LEASE_NAME, holder, leaseMs],
  );
  const row = r.rows[0];
  return row ? { epoch: Number(row.epoch), expiresAt: new Date(row.expires_at).getTime() } : null;
}

/** Gives the lease up at once (a clean shutdown), so a standby need not wait for it to lapse. */
export async function releaseLease(pool: pg.Pool, holder: string): Promise<void> {
  await pool.query(
    `UPDATE scheduler_leases SET expires_at = clock_timestamp() - interval '1 ms' WHERE name = $1 AND holder = $2`,
    [LEASE_NAME, holder],
  );
}

/** The current leader, for the API and admins. */
export async function currentLeader(
  pool: pg.Pool,
): Promise<{ holder: string; epoch: number; expiresAt: string } | null> {
  const r = await pool.query(
    `SELECT holder, epoch, expires_at FROM scheduler_leases WHERE name = $1 AND expires_at > clock_timestamp()`,
    [LEASE_NAME],
  );
  const row = r.rows[0];
  return row
    ? { holder: row.holder, epoch: Number(row.epoch), expiresAt: new Date(row.expires_at).toISOString() }
    : null;
}
