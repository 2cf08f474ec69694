/**
 * The liveness sweep counts a node's silence only while an API instance is present
 * (common/api-presence.ts): a test that sweeps right after its API started says that API has been
 * present for a while (its run of presence writes began `ms` ago).
 */
import type pg from 'pg';

export async function apiPresentFor(pool: pg.Pool, ms: number): Promise<void> {
  // Its first write may still be on its way.
  for (let tries = 0; tries < 50; tries++) {
    const r = await pool.query(
      `UPDATE api_presence SET present_since = now() - make_interval(secs => $1::float8 / 1000)`,
      [ms],
    );
    if (r.rowCount) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('no API instance is present');
}
