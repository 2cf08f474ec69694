/**
 * Cordoning a node (admin; `kubectl cordon` / `drain`, Slurm's `state=drain`): the flag lives in
 * `nodes.cordoned_at` apart from `status`, which the node's daemon drives, so that registering,
 * heartbeats and the daemon's own drain never clear it. The scheduler reads it with the snapshot
 * (scheduler/rounds/read-snapshot.ts) and places nothing on the node from its next round; with
 * `evict`, every round gives the jobs still running there a preemption notice (reason `drain`).
 *
 * What must stay true: once a cordon is answered, no placement lands on the node. A round decided
 * on a snapshot read before it; its placement statement skips cordoned nodes and holds the nodes it
 * places on (FOR KEY SHARE, scheduler/rounds/apply-decisions.ts), and the cordon takes its row FOR
 * UPDATE: it waits for a round committing a placement there, or the round sees it.
 */
import type pg from 'pg';

export interface Cordon {
  /** Why, in the admin's words; null keeps the reason it has (none on a first cordon). */
  reason: string | null;
  /** Also give the jobs on it notices; a later cordon without it does not take it back. */
  evict: boolean;
}

/**
 * Cordons the node; false when there is none. Idempotent: a cordoned node keeps the time it was
 * first cordoned, takes a new reason when one is given, and stays evicting once it was.
 */
export async function cordonNode(pool: pg.Pool, id: string, c: Cordon): Promise<boolean> {
  const r = await pool.query(
    `WITH locked AS (SELECT id FROM nodes WHERE id = $1 FOR UPDATE)
     UPDATE nodes SET cordoned_at = coalesce(nodes.cordoned_at, now()),
                      cordon_reason = coalesce($2, nodes.cordon_reason),
                      cordon_evict = nodes.cordon_evict OR $3
       FROM locked WHERE nodes.id = locked.id
     RETURNING nodes.id`,
    [id, c.reason, c.evict],
  );
  return (r.rowCount ?? 0) > 0;
}

/** Placements may go to the node again from the next round; false when there is no such node. */
export async function uncordonNode(pool: pg.Pool, id: string): Promise<boolean> {
  const r = await pool.query(
    `UPDATE nodes SET cordoned_at = NULL, cordon_reason = NULL, cordon_evict = false WHERE id = $1 RETURNING id`,
    [id],
  );
  return (r.rowCount ?? 0) > 0;
}
