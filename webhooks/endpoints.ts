/**
 * The API's operations on webhook endpoints and their deliveries, one function each; the routes
 * (api/routes/webhooks.ts) keep no SQL. A tenant's rows only: every query is scoped by tenant or by
 * an endpoint already found under the tenant.
 */
import type pg from 'pg';

type Row = Record<string, unknown>;

export async function findEndpoint(pool: pg.Pool, tenantId: string, id: string): Promise<Row | null> {
  const q = await pool.query('SELECT * FROM webhook_endpoints WHERE id = $1 AND tenant_id = $2', [
    id,
    tenantId,
  ]);
  return q.rows[0] ?? null;
}

/**
 * Inserts an endpoint unless the tenant has `max` already; null when at the cap. The count and the
 * insert run under a per-tenant transaction lock: one statement alone is not enough, since under
 * READ COMMITTED concurrent inserts do not see each other's rows, and 60 registrations at once
 * made 22–32 endpoints.
 */
export async function createEndpoint(
  pool: pg.Pool,
  e: { tenantId: string; url: string; events: string[]; description: string | null; secret: string },
  max: number,
): Promise<Row | null> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SELECT pg_advisory_xact_lock(hashtextextended('webhook_endpoints/' || $1, 0))`, [
      e.tenantId,
    ]);
    const q = await client.query(
      `INSERT INTO webhook_endpoints (tenant_id, url, events, description, secret)
       SELECT $1, $2, $3, $4, $5
        WHERE (SELECT count(*) FROM webhook_endpoints WHERE tenant_id = $1) < $6
       RETURNING *`,
      [e.tenantId, e.url, e.events, e.description, e.secret, max],
    );
    await client.query('COMMIT');
    return q.rows[0] ?? null;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

export async function listEndpoints(pool: pg.Pool, tenantId: string): Promise<Row[]> {
  const q = await pool.query('SELECT * FROM webhook_endpoints WHERE tenant_id = $1 ORDER BY created_at', [
    tenantId,
  ]);
  return q.rows;
}

export async function deleteEndpoint(pool: pg.Pool, id: string): Promise<void> {
  await pool.query('DELETE FROM webhook_endpoints WHERE id = $1', [id]);
}

export async function listDeliveries(
  pool: pg.Pool,
  endpointId: string,
  status: string | null,
  limit: number,
  /** Only deliveries of events older than this one (a page's cursor). */
  beforeEventId: string | null = null,
): Promise<Row[]> {
  const q = await pool.query(
    `SELECT * FROM webhook_deliveries WHERE endpoint_id = $1 AND ($2::text IS NULL OR status = $2)
        AND ($4::bigint IS NULL OR event_id < $4)
      ORDER BY event_id DESC LIMIT $3`,
    [endpointId, status, limit, beforeEventId],
  );
  return q.rows;
}

/** Puts a delivery back to pending now, its deadline extended by `window` (an SQL interval). */
export async function replayDelivery(
  pool: pg.Pool,
  endpointId: string,
  deliveryId: string,
  window: string,
): Promise<Row | null> {
  const q = await pool.query(
    `UPDATE webhook_deliveries
        SET status = 'pending', next_attempt_at = now(),
            deadline = greatest(deadline, now() + $3::interval)
      WHERE id = $1 AND endpoint_id = $2 RETURNING *`,
    [deliveryId, endpointId, window],
  );
  return q.rows[0] ?? null;
}
