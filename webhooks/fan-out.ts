/**
 * Fan-out: every job_events row of a subscribable type (events.ts) becomes one delivery per matching
 * endpoint of the job's tenant — one with no `events` matches every such type — an outbox in
 * PostgreSQL, so nothing is lost across restarts. Inserts are idempotent (unique endpoint + event),
 * so a round reads every event after the cursor, page by page, but the cursor only passes events at
 * least `SETTLE_SECONDS` old: an event whose transaction committed after a newer one (ids come from
 * a sequence, visibility from commit order) is still read next round. Several dispatchers may run:
 * duplicates are dropped by the unique key, the cursor only grows.
 */
import type pg from 'pg';
import { webhookEventTypes } from './events.js';

export const CURSOR_ID = 'default';
const SETTLE_SECONDS = 5;
const MAX_ID = '9223372036854775807';

export async function ensureCursor(pool: pg.Pool): Promise<void> {
  await pool.query('INSERT INTO webhook_cursors (id) VALUES ($1) ON CONFLICT (id) DO NOTHING', [CURSOR_ID]);
}

interface Page {
  events: number;
  deliveries: number;
  /** The last event id read, and the last one up to which every event read is settled. */
  lastId: string | null;
  settledId: string | null;
}

async function fanOutPage(pool: pg.Pool, after: string, limit: number, maxAgeHours: number): Promise<Page> {
  const r = await pool.query(
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
          AND ev.type = ANY ($6::text[])
          AND (cardinality(w.events) = 0 OR ev.type = ANY (w.events))
       ON CONFLICT (endpoint_id, event_id) DO NOTHING
       RETURNING 1)
     SELECT (SELECT count(*) FROM ev)::int AS events,
            (SELECT count(*) FROM ins)::int AS deliveries,
            (SELECT max(id) FROM ev)::text AS last_id,
            (SELECT max(id) FROM ev
              WHERE id < coalesce((SELECT min(id) FROM ev WHERE created_at > now() - make_interval(secs => $4)),
                                  $5::bigint))::text AS settled_id`,
    [after, limit, maxAgeHours, SETTLE_SECONDS, MAX_ID, [...webhookEventTypes]],
  );
  const row = r.rows[0];
  return { events: row.events, deliveries: row.deliveries, lastId: row.last_id, settledId: row.settled_id };
}

/** One round: every event after the cursor, in pages of `limit`; returns events read and deliveries made. */
export async function fanOut(
  pool: pg.Pool,
  opts: { limit: number; maxAgeHours: number },
): Promise<{ events: number; deliveries: number }> {
  const cur = await pool.query('SELECT last_event_id::text AS id FROM webhook_cursors WHERE id = $1', [
    CURSOR_ID,
  ]);
  let after: string = cur.rows[0]?.id ?? '0';
  let settledSoFar = true;
  const total = { events: 0, deliveries: 0 };
  for (;;) {
    const page = await fanOutPage(pool, after, opts.limit, opts.maxAgeHours);
    total.events += page.events;
    total.deliveries += page.deliveries;
    // The cursor may pass a page's settled prefix only if every page before it was settled whole.
    if (settledSoFar && page.settledId !== null) {
      await pool.query(
        'UPDATE webhook_cursors SET last_event_id = greatest(last_event_id, $2::bigint) WHERE id = $1',
        [CURSOR_ID, page.settledId],
      );
    }
    settledSoFar &&= page.settledId !== null && page.settledId === page.lastId;
    if (page.events < opts.limit || page.lastId === null) return total;
    after = page.lastId;
  }
}
