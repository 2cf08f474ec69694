// What the round tests against PostgreSQL share: a database of their own for the file, and one
// whole round (lease, snapshot, schedule(), one transaction) as the leader runs it.
import { after, before } from 'node:test';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.js';
import { defaultPolicy } from '../../core/policy.js';
import { schedule } from '../../core/schedule.js';
import type { Policy } from '../../core/types.js';
import { applyDecisions } from '../apply-decisions.js';
import { acquireLease } from '../leader.js';
import { readSnapshot } from '../read-snapshot.js';

/** Creates the database before the file's tests and drops it after; `pool()` is valid in between. */
export function useRoundDatabase(): { pool: () => pg.Pool } {
  let db: TestDatabase;
  let pool: pg.Pool;
  before(async () => {
    db = await createTestDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 4 });
    // Dropping the database terminates what is still connected (57P01): an idle client's error
    // then, not the test's.
    pool.on('error', (err: Error & { code?: string }) => {
      if (err.code !== '57P01') throw err;
    });
  });
  after(async () => {
    await pool.end();
    await db.drop();
  });
  return { pool: () => pool };
}

/** One round under a fresh lease, with the default policy; returns its decisions and snapshot. */
export async function runRound(pool: pg.Pool, policy: Policy = defaultPolicy) {
  const { epoch } = (await acquireLease(pool, 'test-leader', 30_000))!;
  const read = await readSnapshot(pool, 60_000);
  const d = schedule(read.snapshot, policy, read.now);
  await applyDecisions(pool, { holder: 'test-leader', epoch }, d, {
    reasons: [],
    usage: [],
    graceSeconds: 30,
  });
  return { d, snapshot: read.snapshot };
}

/** A tenant with a quota row, a pool, and one node in it (fresh names): what most round tests start from. */
export async function tenantPoolNode(
  pool: pg.Pool,
): Promise<{ tenantId: string; pool: string; nodeId: string }> {
  const t = await pool.query(`INSERT INTO tenants (name) VALUES ('t-' || gen_random_uuid()) RETURNING id`);
  await pool.query(`INSERT INTO quotas (tenant_id) VALUES ($1)`, [t.rows[0].id]);
  const p = await pool.query(
    `INSERT INTO pools (name, device_type) VALUES ('p-' || gen_random_uuid(), 'cpu') RETURNING id, name`,
  );
  const n = await pool.query(
    `INSERT INTO nodes (name, pool_id) VALUES ('n-' || gen_random_uuid(), $1) RETURNING id`,
    [p.rows[0].id],
  );
  return { tenantId: t.rows[0].id, pool: p.rows[0].name, nodeId: n.rows[0].id };
}

/** The spec of an `auto` addition job on `devices` devices, 1,000 steps: what the planner's round tests run. */
export const autoJobSpec = (devices: number) => ({
  resources: { devices },
  workflow: {
    mode: 'auto',
    steps: 1000,
    promptsPerStep: 64,
    groupSize: 8,
    task: { name: 'addition', digits: 2 },
  },
});

/** A 1-device temporal job running on `device` of a node for an hour (past any minimum run time). */
export async function insertRunningJob(
  pool: pg.Pool,
  o: { tenantId: string; pool: string; nodeId: string; device: number; name: string; spec: object },
): Promise<string> {
  const placement = {
    nodeId: o.nodeId,
    devices: [o.device],
    mode: 'temporal',
    stages: { generate: [o.device], train: [o.device] },
    microBatches: 1,
    threadsPerDevice: 1,
    memoryBytes: 16e9,
  };
  const j = await pool.query(
    `INSERT INTO jobs (tenant_id, name, spec, status, pool, node_id, placement, devices, placed_at, run_started_at, queued_at)
     VALUES ($1, $2, $3, 'running', $4, $5, $6, 1, now() - interval '1 hour', now() - interval '1 hour',
             now() - interval '2 hours')
     RETURNING id`,
    [o.tenantId, o.name, o.spec, o.pool, o.nodeId, placement],
  );
  return j.rows[0].id as string;
}
