// The leader's profile cache, fed round after round by the rows written since, holds what a fresh
// read of each job's window holds: the same summaries, the same stage samples, the same steps since
// placement; it reads only the new rows, and forgets the jobs the round no longer asks about.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type pg from 'pg';
import { PROFILE_HISTORY_STEPS } from '../../planner/profile-summary.js';
import { ProfileCache } from '../profile-cache.js';
import { autoJobSpec, tenantPoolNode, useRoundDatabase } from './round-db.js';

const db = useRoundDatabase();

/** The real pool, counting the rows its queries return. */
function counting(pool: pg.Pool): { pool: pg.Pool; rows: () => number } {
  let rows = 0;
  const wrapped = {
    query: async (...args: Parameters<pg.Pool['query']>) => {
      const r = await (pool.query as (...a: unknown[]) => Promise<pg.QueryResult>)(...args);
      rows += r.rows.length;
      return r;
    },
  } as unknown as pg.Pool;
  return { pool: wrapped, rows: () => rows };
}

async function insertSteps(
  pool: pg.Pool,
  jobId: string,
  nodeId: string,
  from: number,
  to: number,
  at: string,
) {
  // Generation, training (slower on even steps, one stall at step 40) and a sync without a batch.
  await pool.query(
    `INSERT INTO stage_profiles (job_id, node_id, stage, step, seconds, batch, devices, peak_bytes,
                                 onload_seconds, offload_seconds, occupancy, created_at)
     SELECT $1, $2, s.stage, g.step,
            CASE s.stage WHEN 'generate' THEN 0.5 + g.step * 0.001
                         WHEN 'train' THEN (CASE WHEN g.step = 40 THEN 9 WHEN g.step % 2 = 0 THEN 0.4 ELSE 0.3 END)
                         ELSE 0.02 END,
            CASE WHEN s.stage = 'sync' THEN 0 ELSE 256 END, 2, 1e6 + g.step,
            0.01, 0.02, CASE WHEN s.stage = 'generate' THEN 0.7 END,
            $5::timestamptz + make_interval(secs => g.step)
       FROM generate_series($3::int, $4::int) AS g(step)
       CROSS JOIN (VALUES ('generate'), ('train'), ('sync')) AS s(stage)`,
    [jobId, nodeId, from, to, at],
  );
}

it("fed by new rows, holds what a fresh read of each window holds, keeps only running jobs' rows, and forgets the rest", async () => {
  const pool = db.pool();
  const { tenantId, pool: poolName, nodeId } = await tenantPoolNode(pool);
  const newJob = async (name: string) =>
    (
      await pool.query(
        `INSERT INTO jobs (tenant_id, name, spec, status, pool, devices) VALUES ($1, $2, $3, 'queued', $4, 2) RETURNING id`,
        [tenantId, name, autoJobSpec(2), poolName],
      )
    ).rows[0].id as string;
  const [a, b, c, d] = [await newJob('a'), await newJob('b'), await newJob('c'), await newJob('d')];
  const start = '2026-11-28T00:00:00Z';
  const placedAt = Date.parse(start) + 50_000;
  await insertSteps(pool, a, nodeId, 1, 50, start);
  await insertSteps(pool, b, nodeId, 1, 1, start);
  // c has not profiled a step yet: it has no history. d ran 70 steps and waits to resume.
  await insertSteps(pool, d, nodeId, 1, 70, start);
  const running = new Map<string, number | null>([
    [a, placedAt],
    [b, null],
    [c, null],
  ]);
  let queued = [d];

  const cache = new ProfileCache();
  const spy = counting(pool);
  const fresh = () => new ProfileCache().read(pool, running, queued);
  let read = await cache.read(spy.pool, running, queued);
  assert.deepEqual(read, await fresh());
  assert.equal(spy.rows(), (50 + 1 + PROFILE_HISTORY_STEPS) * 3, 'the first read: every row of each window');
  assert.deepEqual([...read.keys()].sort(), [a, b, d].sort());
  assert.deepEqual(cache.size, { jobs: 4, rows: 51 * 3 }, 'a queued job keeps its figures, not its rows');
  assert.equal(read.get(a)!.profile.samples, 48);
  assert.equal(read.get(a)!.sincePlaced, null, 'one step since placement');

  // a runs past its window (its warm-up leaves it), b and c run on; d, queued, is not read again.
  for (const [aFrom, aTo, bFrom, bTo] of [
    [51, 60, 2, 3],
    [61, 80, 4, 5],
    [81, 130, 6, 9],
  ] as const) {
    const before = spy.rows();
    await insertSteps(pool, a, nodeId, aFrom, aTo, start);
    await insertSteps(pool, b, nodeId, bFrom, bTo, start);
    await insertSteps(pool, c, nodeId, bTo, bTo, start);
    read = await cache.read(spy.pool, running, queued);
    assert.deepEqual(read, await fresh(), `after step ${aTo}`);
    const added = (aTo - aFrom + 1 + bTo - bFrom + 1 + 1) * 3;
    assert.equal(spy.rows() - before, added, `only the ${added} new rows read`);
  }
  const h = read.get(a)!;
  assert.equal(h.profile.samples, PROFILE_HISTORY_STEPS - 2);
  assert.deepEqual(
    h.sincePlaced,
    { steps: PROFILE_HISTORY_STEPS, stepSeconds: 1 },
    'steps 67–130, the window',
  );
  // The window's training shape: steps 67–130 at 0.3 and 0.4 s less 0.03 s of switching, the stall
  // long gone; generation's occupancy as reported.
  const train = h.profile.stages!.find((s) => s.stage === 'train')!;
  assert.ok(Math.abs(train.computeSeconds - 0.32) < 1e-9, String(train.computeSeconds));
  assert.ok(Math.abs(h.profile.stages!.find((s) => s.stage === 'generate')!.occupancy! - 0.7) < 1e-9);
  assert.equal(h.profile.peakBytes, 1e6 + 130);

  // A job placed again: its steps since are counted from the new placement, without a read.
  let before = spy.rows();
  running.set(a, placedAt + 50_000);
  const moved = await cache.read(spy.pool, running, queued);
  assert.deepEqual(moved.get(a)!.sincePlaced, { steps: 31, stepSeconds: 1 }, 'steps 100–130');
  assert.equal(spy.rows(), before);

  // d placed again: its window is read anew, with the steps it runs now.
  await insertSteps(pool, d, nodeId, 71, 75, start);
  running.set(d, Date.parse(start) + 71_000);
  queued = [];
  before = spy.rows();
  read = await cache.read(spy.pool, running, queued);
  assert.deepEqual(read, await fresh());
  assert.equal(spy.rows() - before, PROFILE_HISTORY_STEPS * 3);
  assert.deepEqual(read.get(d)!.sincePlaced, { steps: 5, stepSeconds: 1 });

  // a requeued after its last report: those rows are read once more, then only its figures kept.
  await insertSteps(pool, a, nodeId, 131, 132, start);
  running.delete(a);
  queued = [a];
  read = await cache.read(spy.pool, running, queued);
  assert.deepEqual(read, await fresh());
  assert.equal(read.get(a)!.profile.peakBytes, 1e6 + 132);

  running.delete(b);
  running.delete(c);
  queued = [];
  await cache.read(spy.pool, running, queued);
  assert.deepEqual(
    cache.size,
    { jobs: 1, rows: PROFILE_HISTORY_STEPS * 3 },
    'a, b and c, no longer asked about, are forgotten',
  );
});
