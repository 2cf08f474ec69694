/** Reads the cluster as placement sees it: live nodes, their devices, and the jobs on each device. */
import type pg from 'pg';
import type { NodeSnapshot } from './first-fit.js';

export async function readSnapshot(pool: pg.Pool, heartbeatTimeoutMs: number): Promise<NodeSnapshot[]> {
  const nodes = await pool.query(
    `SELECT n.id, p.name AS pool, d.index, d.memory_bytes, d.threads
       FROM nodes n JOIN pools p ON p.id = n.pool_id JOIN devices d ON d.node_id = n.id
      WHERE n.status = 'ready' AND n.last_heartbeat_at > now() - make_interval(secs => $1::float8 / 1000)
      ORDER BY n.id, d.index`,
    [heartbeatTimeoutMs],
  );
  const jobs = await pool.query(
    `SELECT node_id, placement FROM jobs WHERE status IN ('placed', 'running') AND node_id IS NOT NULL`,
  );
  const load = new Map<string, number>();
  for (const j of jobs.rows) {
    for (const d of (j.placement?.devices as number[] | undefined) ?? []) {
      const k = `${j.node_id}/${d}`;
      load.set(k, (load.get(k) ?? 0) + 1);
    }
  }
  const byNode = new Map<string, NodeSnapshot>();
  for (const r of nodes.rows) {
    let n = byNode.get(r.id);
    if (!n) byNode.set(r.id, (n = { id: r.id, pool: r.pool, devices: [] }));
    n.devices.push({
      index: r.index,
      memoryBytes: Number(r.memory_bytes),
      threads: r.threads,
      load: load.get(`${r.id}/${r.index}`) ?? 0,
    });
  }
  return [...byNode.values()];
}
