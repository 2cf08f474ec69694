// Cordoned nodes through whole rounds against PostgreSQL: the snapshot reads the flag; a node
// cordoned between the round's read and its transaction takes no placement from that round; a node
// cordoned with eviction has its running job given a `drain` notice that the row and events record,
// and once the job checkpointed and requeued it is placed on another node, never back there.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { requeueJob } from '../../../common/jobs/transitions.js';
import { defaultPolicy } from '../../core/policy.js';
import { schedule } from '../../core/schedule.js';
import { applyDecisions } from '../apply-decisions.js';
import { acquireLease } from '../leader.js';
import { readSnapshot } from '../read-snapshot.js';
import { insertRunningJob, runRound, tenantPoolNode, useRoundDatabase } from './round-db.js';

const db = useRoundDatabase();
const spec = {
  resources: { devices: 1 },
  workflow: { mode: 'temporal', steps: 100, task: { name: 'addition' } },
};

/** A tenant, a pool and a node with `devices` devices, heartbeating now. */
async function poolWithDevices(devices: number) {
  const pool = db.pool();
  const at = await tenantPoolNode(pool);
  await addDevices(at.nodeId, devices);
  return at;
}
async function addDevices(nodeId: string, devices: number) {
  await db.pool().query(
    `INSERT INTO devices (node_id, index, kind, memory_bytes, free_memory_bytes)
       SELECT $1, i, 'cpu', 16e9, 16e9 FROM generate_series(0, $2 - 1) i`,
    [nodeId, devices],
  );
}
async function addNode(poolName: string, devices: number): Promise<string> {
  const n = await db
    .pool()
    .query(
      `INSERT INTO nodes (name, pool_id) SELECT 'n-' || gen_random_uuid(), id FROM pools WHERE name = $1 RETURNING id`,
      [poolName],
    );
  await addDevices(n.rows[0].id, devices);
  return n.rows[0].id as string;
}
const cordon = (nodeId: string, evict = false) =>
  db
    .pool()
    .query(`UPDATE nodes SET cordoned_at = now(), cordon_reason = 'test', cordon_evict = $2 WHERE id = $1`, [
      nodeId,
      evict,
    ]);
const queue = async (tenantId: string, pool: string, name: string) =>
  (
    await db
      .pool()
      .query(
        `INSERT INTO jobs (tenant_id, name, spec, status, pool, devices) VALUES ($1, $2, $3, 'queued', $4, 1) RETURNING id`,
        [tenantId, name, spec, pool],
      )
  ).rows[0].id as string;

it('reads the flag, and a node cordoned after the round read it takes no placement from that round', async () => {
  const pool = db.pool();
  const at = await poolWithDevices(1);
  const id = await queue(at.tenantId, at.pool, 'late-cordon');
  const { epoch } = (await acquireLease(pool, 'test-leader', 30_000))!;
  const read = await readSnapshot(pool, 60_000);
  const n = read.snapshot.nodes.find((x) => x.id === at.nodeId)!;
  assert.equal(n.cordoned, undefined, 'not cordoned: read as the simulator builds nodes');
  const d = schedule(read.snapshot, defaultPolicy, read.now);
  assert.deepEqual(
    d.place.map((p) => [p.jobId, p.nodeId]),
    [[id, at.nodeId]],
    'decided on the snapshot',
  );
  await cordon(at.nodeId);
  await applyDecisions(pool, { holder: 'test-leader', epoch }, d, {
    reasons: [],
    usage: [],
    graceSeconds: 30,
  });
  const row = (await pool.query(`SELECT status::text, node_id FROM jobs WHERE id = $1`, [id])).rows[0];
  assert.deepEqual(row, { status: 'queued', node_id: null });
  const active = (await pool.query(`SELECT active_devices FROM quotas WHERE tenant_id = $1`, [at.tenantId]))
    .rows[0];
  assert.equal(active.active_devices, 0, 'nothing charged to the quota');

  const next = await runRound(pool);
  const read2 = next.snapshot.nodes.find((x) => x.id === at.nodeId)!;
  assert.deepEqual([read2.cordoned, read2.evict], [true, false]);
  assert.deepEqual(next.d.place, []);
  assert.equal(next.d.queue.find((q) => q.jobId === id)?.waitReason, 'capacity');
  await pool.query(`UPDATE jobs SET status = 'cancelled' WHERE id = $1`, [id]);
});

it('evicts a running job with a drain notice; back in the queue it goes to another node', async () => {
  const pool = db.pool();
  const at = await poolWithDevices(1);
  const other = await addNode(at.pool, 1);
  await pool.query(`UPDATE nodes SET last_heartbeat_at = now() WHERE id = ANY($1::uuid[])`, [
    [at.nodeId, other],
  ]);
  const id = await insertRunningJob(pool, { ...at, device: 0, name: 'evicted', spec });
  await pool.query(`UPDATE quotas SET active_devices = 1 WHERE tenant_id = $1`, [at.tenantId]);
  await cordon(at.nodeId, true);

  const first = await runRound(pool);
  assert.deepEqual(
    first.d.preempt.map((p) => [p.jobId, p.reason, p.forJobId]),
    [[id, 'drain', id]],
  );
  const row = (await pool.query(`SELECT preempt_reason FROM jobs WHERE id = $1`, [id])).rows[0];
  assert.equal(row.preempt_reason, 'drain');
  const preempting = await pool.query(
    `SELECT data FROM job_events WHERE job_id = $1 AND type = 'job.preempting'`,
    [id],
  );
  assert.equal(preempting.rows[0].data.reason, 'drain');
  assert.deepEqual((await runRound(pool)).d.preempt, [], 'one notice');

  // It checkpoints and gives its devices back, as the worker's `preempted` finish does.
  await requeueJob(pool, id, at.nodeId, null, 'preempted', null);
  const preempted = await pool.query(
    `SELECT data FROM job_events WHERE job_id = $1 AND type = 'job.preempted'`,
    [id],
  );
  assert.equal(preempted.rows[0].data.reason, 'drain');
  const back = await runRound(pool);
  assert.deepEqual(
    back.d.place.map((p) => [p.jobId, p.nodeId]),
    [[id, other]],
  );
});
