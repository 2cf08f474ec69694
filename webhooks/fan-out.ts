/**
 * Fan-out: every job_events row after the cursor becomes one delivery per matching endpoint of
 * the job's tenant (an outbox in PostgreSQL, so nothing is lost across restarts). The insert is
 * idempotent (unique endpoint + event), so events are re-read until they are `SETTLE_SECONDS`
 * old and only then passed by the cursor: an event whose transaction committed after a newer one
 * (ids come from a sequence, visibility from commit order) is still seen.
 */
import type pg from 'pg';

export const CURSOR_ID = 'default';
const SETTLE_SECONDS = 5;

export async function ensureCursor(pool: pg.Pool): Promise<void> {
  await pool.query('INSERT INTO webhook_cursors (id) VALUES ($1) ON CONFLICT (id) DO NOTHING', [CURSOR_ID]);
}

/** One pass over up to `limit` events; returns how many events it read and deliveries it created. */
export async function fanOut(
  pool: pg.Pool,
  opts: { limit: number; maxAgeHours: number },
): Promise<{ events: number; deliveries: number }> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // One dispatcher fans out at a time; others wait here instead of inserting the same rows.
    const cur = await client.query('SELECT last_event_id FROM webhook_cursors WHERE id = $1 FOR UPDATE', [
      CURSOR_ID,
    ]);
    const after = cur.rows[0]?.last_event_id ?? '0';
    const r = await client.query(
      `WITH ev AS (
         SELECT e.id, e.job_id, e.type, e.data, e.created_at, j.tenant_id, j.name
           FROM job_events e JOIN jobs j ON j.id = e.job_id
          WHERE e.id > $1 ORDER BY e.id LIMIT $2),
       ins AS (
         INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, payload, deadline)
         SELECT w.id, ev.id, ev.type,
                jsonb_build_object(
                  'type', ev.type,
                  'timestamp', to_char(ev.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                  'data', ev.data || jsonb_build_object('jobId', ev.job_id, 'jobName', ev.name, 'eventId', ev.id::text)),
                ev.created_at + make_interval(secs => $3 * 3600)
           FROM ev JOIN webhook_endpoints w
             ON w.tenant_id = ev.tenant_id AND w.created_at <= ev.created_at
            AND (cardinality(w.events) = 0 OR ev.type = ANY (w.events))
         ON CONFLICT (endpoint_id, event_id) DO NOTHING
         RETURNING 1),
       settled AS (
         SELECT max(id) AS id FROM ev
          WHERE id < coalesce((SELECT min(id) FROM ev WHERE created_at > now() - make_interval(secs => $4)),
                              9223372036854775807))
       SELECT (SELECT count(*) FROM ev)::int AS events, (SELECT count(*) FROM ins)::int AS deliveries,
              (SELECT id FROM settled) AS settled`,
      [after, opts.limit, opts.maxAgeHours, SETTLE_SECONDS],
    );
    const row = r.rows[0];
    if (row.settled !== null) {
      await client.query('UPDATE webhook_cursors SET last_event_id = $2 WHERE id = $1', [
        CURSOR_ID,
        row.settled,
      ]);
    }
    await client.query('COMMIT');
    return { events: row.events, deliveries: row.deliveries };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
