/**
 * The placement path the round replaced, kept only as bench:scheduler's baseline: per queue entry,
 * read the job, re-read the whole cluster (two queries), first fit, one guarded UPDATE. Same SQL as
 * the consumer it was (scheduler/placement/ before the rounds), plus the epoch the fence now needs.
 */
import type pg from 'pg';

interface DeviceLoad {
  index: number;
  memoryBytes: number;
  threads: number;
  load: number;
}

async function readCluster(pool: pg.Pool) {
  const nodes = await pool.query(
    `SELECT n.id, p.name AS pool, d.index, d.memory_bytes, d.threads
       FROM nodes n JOIN pools p ON p.id = n.pool_id JOIN devices d ON d.node_id = n.id
      WHERE n.status = 'ready' ORDER BY n.id, d.index`,
  );
  const jobs = await pool.query(
    `SELECT node_id, placement FROM jobs WHERE status IN ('placed', 'running') AND node_id IS NOT NULL`,
  );
  const load = new Map<string, number>();
  for (const j of jobs.rows)
    for (const d of (j.placement?.devices as number[] | undefined) ?? [])
      load.set(`${j.node_id}/${d}`, (load.get(`${j.node_id}/${d}`) ?? 0) + 1);
  const byNode = new Map<string, { id: string; pool: string; devices: DeviceLoad[] }>();
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

/** Places one job the old way; returns whether it was placed. */
export async function firstFitPlace(
  pool: pg.Pool,
  jobId: string,
  epoch: number,
  maxJobsPerDevice: number,
): Promise<boolean> {
  const r = await pool.query(`SELECT status, queue_seq, pool, devices FROM jobs WHERE id = $1`, [jobId]);
  const job = r.rows[0];
  if (!job || job.status !== 'queued') return false;
  const best = (await readCluster(pool))
    .filter((n) => n.pool === job.pool)
    .map((n) => {
      const chosen = n.devices
        .filter((d) => d.load < maxJobsPerDevice)
        .sort((a, b) => a.load - b.load)
        .slice(0, job.devices);
      return { n, chosen, load: chosen.reduce((s, d) => s + d.load, 0) };
    })
    .filter((c) => c.chosen.length === job.devices)
    .sort((a, b) => a.load - b.load || a.n.id.localeCompare(b.n.id))[0];
  if (!best) return false;
  const devices = best.chosen.map((d) => d.index).sort((a, b) => a - b);
  const placement = { nodeId: best.n.id, devices, mode: 'temporal', threadsPerDevice: 1, memoryBytes: 0 };
  const u = await pool.query(
    `WITH j AS (
       UPDATE jobs SET status = 'placed', node_id = $2, placement = $3::jsonb, wait_reason = NULL, sched_epoch = $5, updated_at = now()
        WHERE id = $1 AND status = 'queued' AND queue_seq = $4
          AND (SELECT active_devices + jobs.devices <= max_concurrent_devices FROM quotas q WHERE q.tenant_id = jobs.tenant_id)
       RETURNING *
     ), q AS (
       UPDATE quotas SET active_devices = active_devices + j.devices FROM j WHERE quotas.tenant_id = j.tenant_id
     ), e AS (
       INSERT INTO job_events (job_id, type, data)
       SELECT id, 'job.admitted', jsonb_build_object('status', 'admitted') FROM j
       UNION ALL
       SELECT id, 'job.placed', jsonb_build_object('status', 'placed', 'placement', $3::jsonb) FROM j
     )
     SELECT id FROM j`,
    [jobId, best.n.id, JSON.stringify(placement), job.queue_seq, epoch],
  );
  return u.rows.length > 0;
}
