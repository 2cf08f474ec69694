/**
 * A pool's device-lock timeline for the admin view: which job (and tenant) held each device of the
 * pool, in which stage, from when to when. The holds come from the device lock's timeline stream
 * (common/device-lock/timeline.ts); the pool's devices and the jobs' names from PostgreSQL.
 */
import type pg from 'pg';
import type { DeviceLockService, EndReason } from '../../common/device-lock/index.js';
import { cordonView } from '../nodes/view.js';

export interface PoolDevice {
  node: string;
  nodeName: string;
  nodeStatus: string;
  /** The admin's cordon of the node, as GET /v1/nodes shows it; null: not cordoned. */
  nodeCordon: ReturnType<typeof cordonView>;
  index: number;
}

export interface PoolHold {
  node: string;
  device: number;
  job: string;
  jobName: string | null;
  tenantId: string | null;
  tenantName: string | null;
  stage: string;
  token: number;
  start: number;
  end: number | null;
  reason: EndReason | null;
}

export interface PoolTimeline {
  devices: PoolDevice[];
  holds: PoolHold[];
  /** Handoffs from one job to another on the same device, within the page. */
  switches: number;
  /** The next page's cursor; null on the last. */
  nextCursor: string | null;
}

/** The pool's devices, nodes lost included (their past holds are still history); null: no such pool. */
async function poolDevices(db: pg.Pool, pool: string): Promise<PoolDevice[] | null> {
  const r = await db.query(
    `SELECT p.id AS pool_id, n.id AS node, n.name AS node_name, n.status::text AS node_status,
            n.cordoned_at, n.cordon_reason, n.cordon_evict, d.index
       FROM pools p
       LEFT JOIN nodes n ON n.pool_id = p.id
       LEFT JOIN devices d ON d.node_id = n.id
      WHERE p.name = $1
      ORDER BY n.registered_at, n.id, d.index`,
    [pool],
  );
  if (!r.rows.length) return null;
  return r.rows
    .filter((row) => row.node !== null && row.index !== null)
    .map((row) => ({
      node: row.node,
      nodeName: row.node_name,
      nodeStatus: row.node_status,
      nodeCordon: cordonView({
        cordonedAt: row.cordoned_at,
        cordonReason: row.cordon_reason,
        cordonEvict: row.cordon_evict,
      }),
      index: row.index,
    }));
}

interface JobLabel {
  name: string;
  tenantId: string;
  tenantName: string;
}

async function jobLabels(db: pg.Pool, ids: string[]): Promise<Map<string, JobLabel>> {
  if (!ids.length) return new Map();
  const r = await db.query(
    `SELECT j.id, j.name, t.id AS tenant_id, t.name AS tenant_name
       FROM jobs j JOIN tenants t ON t.id = j.tenant_id
      WHERE j.id = ANY($1::uuid[])`,
    [ids],
  );
  return new Map(
    r.rows.map((row) => [row.id, { name: row.name, tenantId: row.tenant_id, tenantName: row.tenant_name }]),
  );
}

export function countSwitches(holds: readonly Pick<PoolHold, 'node' | 'device' | 'job' | 'start'>[]): number {
  const byDevice = new Map<string, { job: string; start: number }[]>();
  for (const h of holds) {
    const key = `${h.node}/${h.device}`;
    byDevice.set(key, [...(byDevice.get(key) ?? []), h]);
  }
  let switches = 0;
  for (const list of byDevice.values()) {
    list.sort((a, b) => a.start - b.start);
    for (let i = 1; i < list.length; i++) if (list[i]!.job !== list[i - 1]!.job) switches++;
  }
  return switches;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function readPoolTimeline(
  db: pg.Pool,
  locks: DeviceLockService,
  pool: string,
  window: { since: number; limit: number; after?: string | undefined },
): Promise<PoolTimeline | null> {
  const devices = await poolDevices(db, pool);
  if (!devices) return null;
  // Device ids in the lock are `<node id>/<index>` (worker-node/stage-loop.ts names them so).
  const ids = devices.map((d) => `${d.node}/${d.index}`);
  const page = ids.length
    ? await locks.readTimeline({
        devices: ids,
        since: window.since,
        limit: window.limit,
        ...(window.after === undefined ? {} : { after: window.after }),
      })
    : { intervals: [], cursor: null };
  const jobIds = [...new Set(page.intervals.map((i) => i.job))].filter((j) => UUID.test(j));
  const labels = await jobLabels(db, jobIds);
  const holds = page.intervals.map((i): PoolHold => {
    const slash = i.device.lastIndexOf('/');
    const label = labels.get(i.job);
    return {
      node: i.device.slice(0, slash),
      device: Number(i.device.slice(slash + 1)),
      job: i.job,
      jobName: label?.name ?? null,
      tenantId: label?.tenantId ?? null,
      tenantName: label?.tenantName ?? null,
      stage: i.stage,
      token: i.token,
      start: i.start,
      end: i.end,
      reason: i.reason,
    };
  });
  return { devices, holds, switches: countSwitches(holds), nextCursor: page.cursor };
}
