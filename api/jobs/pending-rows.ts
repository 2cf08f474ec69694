/** The job rows behind a page of a pool's queue view (admin): still queued, in one query. */
import type pg from 'pg';

export interface PendingRow {
  id: string;
  tenantId: string;
  tenantName: string;
  name: string;
  priority: number;
  queuedAt: Date;
}

export async function pendingRows(pool: pg.Pool, ids: string[]): Promise<Map<string, PendingRow>> {
  if (!ids.length) return new Map();
  const r = await pool.query(
    `SELECT j.id, j.tenant_id, t.name AS tenant_name, j.name, j.priority, j.queued_at
       FROM jobs j JOIN tenants t ON t.id = j.tenant_id
      WHERE j.id = ANY($1::uuid[]) AND j.status = 'queued'`,
    [ids],
  );
  return new Map(
    r.rows.map((row) => [
      row.id as string,
      {
        id: row.id,
        tenantId: row.tenant_id,
        tenantName: row.tenant_name,
        name: row.name,
        priority: row.priority,
        queuedAt: new Date(row.queued_at),
      },
    ]),
  );
}
