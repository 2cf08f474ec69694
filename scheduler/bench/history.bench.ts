/**
 * bench:scheduler, part 2 — the snapshot read when the running jobs have a history: N jobs of S
 * profiled steps (generation, training and a sync each step) that checkpoint every 2 steps (an
 * event each), each writing one more step between reads, as a round sees them. The leader's first read loads each job's window (its last
 * PROFILE_HISTORY_STEPS steps); its later reads take only the rows written since (profile-cache.ts).
 * The baselines, in the same run on the same database: every read from an empty cache; the
 * leader's reads with PostgreSQL's JIT on (its default; our sessions turn it off, common/db.ts);
 * and without the index of events by type (job_events (job_id, type, id)).
 */
import pg from 'pg';
import { SESSION_OPTIONS } from '../../common/db.js';
import { createTestDatabase, dropIdleTemplates } from '../../test/helpers/database.js';
import { percentile, runBench } from '../../test/bench/stats.js';
import { ProfileCache } from '../rounds/profile-cache.js';
import { readSnapshot } from '../rounds/read-snapshot.js';

const READS = 8;
const fmt = (ms: number) => `${ms.toFixed(0)} ms`;

async function seed(pool: pg.Pool, jobs: number, steps: number): Promise<void> {
  const t = await pool.query(`INSERT INTO tenants (name) VALUES ('bench') RETURNING id`);
  await pool.query(`INSERT INTO quotas (tenant_id) VALUES ($1)`, [t.rows[0].id]);
  const p = await pool.query(`INSERT INTO pools (name, device_type) VALUES ('bench', 'cpu') RETURNING id`);
  // One node per 8 jobs, each job on one device of it.
  const nodes = Math.ceil(jobs / 8);
  await pool.query(
    `INSERT INTO nodes (name, pool_id, last_heartbeat_at)
     SELECT 'n' || i, $1, now() + interval '1 day' FROM generate_series(1, $2::int) i`,
    [p.rows[0].id, nodes],
  );
  await pool.query(
    `INSERT INTO devices (node_id, index, kind, memory_bytes, free_memory_bytes) SELECT id, d, 'cpu', 16e9, 16e9 FROM nodes, generate_series(0, 7) d`,
  );
  await pool.query(
    `INSERT INTO jobs (tenant_id, name, spec, status, pool, devices, node_id, placement, placed_at, run_started_at, progress_step)
     SELECT $1, 'j' || i, $2, 'running', 'bench', 1, n.id,
            jsonb_build_object('nodeId', n.id, 'devices', jsonb_build_array((i - 1) % 8), 'mode', 'temporal',
                               'stages', jsonb_build_object('generate', jsonb_build_array((i - 1) % 8),
                                                            'train', jsonb_build_array((i - 1) % 8))),
            now() - interval '1 day', now() - interval '1 day', $4
       FROM generate_series(1, $3::int) i JOIN nodes n ON n.name = 'n' || ((i - 1) / 8 + 1)`,
    [
      t.rows[0].id,
      {
        resources: { devices: 1 },
        workflow: { mode: 'auto', steps: 100_000, task: { name: 'addition', digits: 2 } },
      },
      jobs,
      steps,
    ],
  );
  await pool.query(
    `INSERT INTO job_events (job_id, type, data, created_at)
     SELECT j.id, e.type, '{}', now() - interval '1 day' FROM jobs j
      CROSS JOIN (VALUES (1, 'job.placed'), (2, 'job.running')) AS e(n, type) ORDER BY e.n, j.id`,
  );
  // Rows in the order reports write them: step after step, every job's step in turn.
  for (let from = 1; from <= steps; from += 100) await addSteps(pool, from, Math.min(steps, from + 99));
  await pool.query('VACUUM ANALYZE');
}

async function addSteps(pool: pg.Pool, from: number, to: number): Promise<void> {
  await pool.query(
    `INSERT INTO stage_profiles (job_id, node_id, stage, step, seconds, batch, devices, peak_bytes, onload_seconds, offload_seconds, occupancy, created_at)
     SELECT j.id, j.node_id, s.stage, g.step, s.seconds * (1 + random() * 0.1), s.batch, 1, 1e8, 0.02, 0.01, s.occupancy,
            now() - interval '1 day' + make_interval(secs => g.step)
       FROM generate_series($1::int, $2::int) g(step) CROSS JOIN jobs j
       CROSS JOIN (VALUES ('generate', 0.5, 512, 0.8), ('train', 0.3, 512, NULL), ('sync', 0.01, 0, NULL)) AS s(stage, seconds, batch, occupancy)
      ORDER BY g.step, j.id`,
    [from, to],
  );
  await pool.query(
    `INSERT INTO job_events (job_id, type, data, created_at)
     SELECT j.id, 'job.checkpoint', jsonb_build_object('step', g.step), now() - interval '1 day' + make_interval(secs => g.step)
       FROM generate_series($1::int, $2::int) g(step) CROSS JOIN jobs j WHERE g.step % 2 = 0
      ORDER BY g.step, j.id`,
    [from, to],
  );
}

async function timeReads(pool: pg.Pool, next: number, cache: () => ProfileCache): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < READS; i++) {
    await addSteps(pool, next + i, next + i);
    const c = cache();
    const t = performance.now();
    const read = await readSnapshot(pool, 60_000, c);
    times.push(performance.now() - t);
    if (!read.snapshot.running.every((r) => r.plan.confidence === 1))
      throw new Error('a running job was not fitted');
  }
  return times.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  console.log(
    `bench:scheduler — the snapshot read with running jobs' history (3 profiled stages a step, a checkpoint event every 2 steps, one more step each between reads; ${READS} reads)`,
  );
  const rows: Record<string, string>[] = [];
  for (const [jobs, steps] of [
    [200, 500],
    [1000, 1000],
  ] as const) {
    const db = await createTestDatabase();
    const pool = new pg.Pool({ connectionString: db.url, max: 8, options: SESSION_OPTIONS });
    const jitPool = new pg.Pool({ connectionString: db.url, max: 8 });
    for (const p of [pool, jitPool]) p.on('error', () => undefined);
    try {
      const s = performance.now();
      await seed(pool, jobs, steps);
      const seeded = (performance.now() - s) / 1000;
      let next = steps + 1;
      const cold = await timeReads(pool, next, () => new ProfileCache());
      next += READS;
      const leader = new ProfileCache();
      const t = performance.now();
      await readSnapshot(pool, 60_000, leader);
      const first = performance.now() - t;
      const warm = await timeReads(pool, next, () => leader);
      next += READS;
      const jit = await timeReads(jitPool, next, () => leader);
      next += READS;
      await pool.query('DROP INDEX job_events_job_id_type_id_idx');
      const unindexed = await timeReads(pool, next, () => leader);
      const p50 = (xs: number[]) => percentile(xs, 50);
      rows.push({
        case: `${jobs.toLocaleString('en')} running jobs × ${steps.toLocaleString('en')} steps (seeded in ${seeded.toFixed(0)} s)`,
        'empty cache p50 / p99': `${fmt(p50(cold))} / ${fmt(percentile(cold, 99))}`,
        'leader: first read': fmt(first),
        'later reads p50 / p99': `${fmt(p50(warm))} / ${fmt(percentile(warm, 99))}`,
        'later reads, JIT on, p50': fmt(p50(jit)),
        'later reads, no events index, p50': fmt(p50(unindexed)),
        'later vs empty (p50)': `${(p50(cold) / p50(warm)).toFixed(1)}×`,
      });
    } finally {
      await pool.end();
      await jitPool.end();
      await db.drop();
    }
  }
  console.table(rows);
  await dropIdleTemplates();
}

runBench(main);
