/**
 * The scheduler's metrics after a real round (scheduler/rounds/round-loop.ts against PostgreSQL and
 * Redis, as the leader runs it), scraped as a standby replica would: preemption notices by reason,
 * queued jobs by wait reason, each tenant's share and entitlement (through Redis) and the lease's
 * epoch. The database and the Redis prefix are this file's own, and are removed after it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.js';
import { fileRedis, testRedisUrl } from '../../../test/helpers/redis.js';
import { defaultPolicy } from '../../../scheduler/core/policy.js';
import { acquireLease, releaseLease } from '../../../scheduler/rounds/leader.js';
import { startRoundLoop, type RoundReport } from '../../../scheduler/rounds/round-loop.js';
import { createLogger } from '../../logger.js';
import { redisNames } from '../../queues.js';
import { readCapacity } from '../../capacity.js';
import { readAllShares } from '../../shares.js';
import { createSchedulerMetrics } from '../scheduler.js';
import { sample } from './exposition.js';
import { cordonNode, uncordonNode } from '../../../api/nodes/cordon.js';

const { redis, prefix } = fileRedis(after);
const names = redisNames(`${prefix}:`);
let db: TestDatabase;
let pool: pg.Pool;
before(async () => {
  db = await createTestDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 4 });
  pool.on('error', (err: Error & { code?: string }) => {
    if (err.code !== '57P01') throw err;
  });
});
after(async () => {
  await pool.end();
  await db.drop();
});

const spec = {
  resources: { devices: 1 },
  workflow: { mode: 'temporal', steps: 1000, task: { name: 'addition', digits: 2 } },
};

async function tenant(name: string, quota: { maxConcurrentDevices?: number } = {}): Promise<string> {
  const t = await pool.query(`INSERT INTO tenants (name) VALUES ($1) RETURNING id`, [name]);
  await pool.query(`INSERT INTO quotas (tenant_id, max_concurrent_devices) VALUES ($1, $2)`, [
    t.rows[0].id,
    quota.maxConcurrentDevices ?? 8,
  ]);
  return t.rows[0].id as string;
}

/** A pool of one ready node with `devices` CPU devices; returns the node's id. */
async function poolWith(name: string, devices: number): Promise<string> {
  await pool.query(`INSERT INTO pools (name, device_type) VALUES ($1, 'cpu')`, [name]);
  const node = await pool.query(
    `INSERT INTO nodes (name, pool_id, last_heartbeat_at) SELECT $1, id, now() FROM pools WHERE name = $2 RETURNING id`,
    [`n-${name}`, name],
  );
  const nodeId = node.rows[0].id as string;
  await pool.query(
    `INSERT INTO devices (node_id, index, kind, memory_bytes, free_memory_bytes)
     SELECT $1, i, 'cpu', 16e9, 16e9 FROM generate_series(0, $2 - 1) i`,
    [nodeId, devices],
  );
  return nodeId;
}

/** A 1-device job running on `device` for an hour (past any minimum run time). */
async function running(tenantId: string, poolName: string, nodeId: string, device: number): Promise<string> {
  const placement = {
    nodeId,
    devices: [device],
    mode: 'temporal',
    stages: { generate: [device], train: [device] },
    microBatches: 1,
    threadsPerDevice: 1,
    memoryBytes: 16e9,
  };
  const j = await pool.query(
    `INSERT INTO jobs (tenant_id, name, spec, status, pool, node_id, placement, devices, placed_at, run_started_at, queued_at)
     VALUES ($1, 'r', $2, 'running', $3, $4, $5, 1, now() - interval '1 hour', now() - interval '1 hour',
             now() - interval '2 hours') RETURNING id`,
    [tenantId, spec, poolName, nodeId, placement],
  );
  return j.rows[0].id as string;
}

async function queued(tenantId: string, poolName: string, devices = 1): Promise<string> {
  const j = await pool.query(
    `INSERT INTO jobs (tenant_id, name, spec, status, pool, devices, queued_at)
     VALUES ($1, 'q', $2, 'queued', $3, $4, now() - interval '1 minute') RETURNING id`,
    [tenantId, { ...spec, resources: { devices } }, poolName, devices],
  );
  return j.rows[0].id as string;
}

test("a round's notices, wait reasons, shares and epoch are exported, the same by every replica", async () => {
  const lender = await tenant('lender');
  const owner = await tenant('owner');
  const capped = await tenant('capped', { maxConcurrentDevices: 0 });
  // Pool "shared": the lender holds both devices, the owner (under its entitlement) waits for one.
  const sharedNode = await poolWith('shared', 3);
  for (const device of [0, 1, 2]) await running(lender, 'shared', sharedNode, device);
  await queued(owner, 'shared');
  await queued(owner, 'shared');
  await queued(capped, 'shared');
  // Pool "solo": the lender's one job, paused by its tenant.
  const soloNode = await poolWith('solo', 1);
  const paused = await running(lender, 'solo', soloNode, 0);
  await pool.query(`UPDATE jobs SET paused_at = now() WHERE id = $1`, [paused]);

  // An earlier leader's term: this round's leader takes over at epoch 2.
  await acquireLease(pool, 'earlier-leader', 30_000);
  await releaseLease(pool, 'earlier-leader');

  const leader = createSchedulerMetrics(pool);
  const reports: RoundReport[] = [];
  const subscriber = new Redis(testRedisUrl());
  const loop = startRoundLoop({
    pool,
    redis,
    subscriber,
    names,
    logger: createLogger('test', 'silent'),
    options: {
      holder: 'metrics-test',
      // At this group-load bound two jobs on the planner's prior do not share a device.
      policy: { ...defaultPolicy, maxGroupLoad: 1.6 },
      intervalMs: 60_000,
      leaseMs: 30_000,
      heartbeatTimeoutMs: 60_000,
      usageHalfLifeSeconds: 3600,
    },
    onRound: (r) => {
      reports.push(r);
      leader.roundDone(r);
    },
  });
  try {
    for (let i = 0; i < 200 && reports.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
  } finally {
    await loop.close();
    subscriber.disconnect();
  }
  assert.equal(reports.length, 1, 'one round ran');
  assert.deepEqual([...reports[0]!.noticeReasons].sort(), ['pause', 'reclaim']);
  // Queued after the round: no round has said why it waits yet. And a paused one, in no round's order.
  await queued(owner, 'solo');
  await pool.query(`UPDATE jobs SET paused_at = now() WHERE id = $1`, [await queued(owner, 'solo')]);

  // A standby replica: fed no round, it reads the same from PostgreSQL and Redis.
  const standby = createSchedulerMetrics(pool, {
    capacity: () => readCapacity(redis, names),
    shares: () => readAllShares(redis, names),
  });
  const leaderText = await leader.registry.metrics();
  const standbyText = await standby.registry.metrics();

  const notices = (reason: string) =>
    sample(leaderText, 'timeshare_scheduler_preemption_notices_total', { reason });
  assert.equal(notices('reclaim'), 1, 'the owner takes a device back from the lender');
  assert.equal(notices('pause'), 1, 'the paused job is told to checkpoint');
  assert.equal(notices('aging'), 0, 'a reason not seen yet reads 0');

  for (const text of [leaderText, standbyText]) {
    const waiting = (pool: string, reason: string) =>
      sample(text, 'timeshare_queue_waiting_jobs', { pool, reason });
    assert.equal(waiting('shared', 'fair_share'), 1, "the owner's first job waits for the reclaimed device");
    assert.equal(waiting('shared', 'capacity'), 1, 'its second for a free one');
    assert.equal(waiting('shared', 'quota'), 1, "the capped tenant's for its quota");
    assert.equal(waiting('solo', 'none'), 1, 'a job no round has seen yet');
    assert.equal(sample(text, 'timeshare_queue_depth_jobs', { pool: 'solo' }), 1, 'the paused one left out');
    assert.equal(sample(text, 'timeshare_scheduler_leader_epoch'), 2, 'the second leader');
  }
  const tenantFigures = (pool: string, tenant: string) =>
    [
      'timeshare_tenant_share_ratio',
      'timeshare_tenant_entitlement_ratio',
      'timeshare_tenant_held_devices',
      'timeshare_tenant_queued_devices',
    ].map((name) => {
      const v = sample(standbyText, name, { pool, tenant });
      return v === null ? null : Math.round(v * 1000) / 1000;
    });
  // Three tenants want devices in "shared": a third each. The shares are the round's outcome: of the
  // lender's three devices, the one under notice counts as the owner's, for whom it is freed.
  assert.deepEqual(tenantFigures('shared', 'lender'), [0.667, 0.333, 2, 0]);
  assert.deepEqual(tenantFigures('shared', 'owner'), [0.333, 0.333, 1, 2]);
  assert.deepEqual(tenantFigures('shared', 'capped'), [0, 0.333, 0, 1]);
  assert.deepEqual(tenantFigures('solo', 'lender'), [1, 1, 1, 0]);
  assert.equal(tenantFigures('solo', 'owner')[0], null, 'the round saw no demand of the owner in "solo"');
  assert.doesNotMatch(standbyText, new RegExp(`tenant="${lender}"`), 'labelled by name, not id');
  assert.equal(
    sample(leaderText, 'timeshare_tenant_share_ratio', { pool: 'shared', tenant: 'lender' }),
    null,
    'a registry given no Redis reads no shares',
  );
});

test('cordoned nodes are counted apart, by pool and status, and still counted among the nodes', async () => {
  await poolWith('cordons', 1);
  const node = await pool.query(
    `INSERT INTO nodes (name, pool_id, last_heartbeat_at)
     SELECT 'n-cordons-2', id, now() FROM pools WHERE name = 'cordons' RETURNING id`,
  );
  const id = node.rows[0].id as string;
  const scrape = () => createSchedulerMetrics(pool).registry.metrics();
  assert.equal(await cordonNode(pool, id, { reason: 'disk', evict: true }), true);
  const cordoned = await scrape();
  assert.equal(sample(cordoned, 'timeshare_nodes', { pool: 'cordons', status: 'ready' }), 2);
  assert.equal(sample(cordoned, 'timeshare_nodes_cordoned', { pool: 'cordons', status: 'ready' }), 1);
  await uncordonNode(pool, id);
  const none = await scrape();
  assert.equal(sample(none, 'timeshare_nodes_cordoned', { pool: 'cordons', status: 'ready' }), 0);
});
