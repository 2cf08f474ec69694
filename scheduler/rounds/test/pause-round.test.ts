// Paused jobs through whole rounds against PostgreSQL: one paused between the round's read and its
// transaction is not placed, and a running one is given a `pause` notice that the row records.
import assert from 'node:assert/strict';
import { it } from 'node:test';
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

async function poolWithDevices(devices: number) {
  const pool = db.pool();
  const at = await tenantPoolNode(pool);
  await pool.query(
    `INSERT INTO devices (node_id, index, kind, memory_bytes, free_memory_bytes)
     SELECT $1, i, 'cpu', 16e9, 16e9 FROM generate_series(0, $2 - 1) i`,
    [at.nodeId, devices],
  );
  return at;
}

it('a job paused after the round read it is not placed by that round', async () => {
  const pool = db.pool();
  const at = await poolWithDevices(1);
  const id = (
    await pool.query(
      `INSERT INTO jobs (tenant_id, name, spec, status, pool, devices) VALUES ($1, 'late-pause', $2, 'queued', $3, 1) RETURNING id`,
      [at.tenantId, spec, at.pool],
    )
  ).rows[0].id as string;
  const { epoch } = (await acquireLease(pool, 'test-leader', 30_000))!;
  const read = await readSnapshot(pool, 60_000);
  const d = schedule(read.snapshot, defaultPolicy, read.now);
  assert.deepEqual(
    d.place.map((p) => p.jobId),
    [id],
    'decided on the snapshot',
  );
  await pool.query(`UPDATE jobs SET paused_at = now() WHERE id = $1`, [id]);
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
  // And the next round does not read it at all.
  assert.deepEqual((await runRound(pool)).snapshot.queued, []);
});

it('a running job paused gets a pause notice from the next round, recorded on its row and as an event', async () => {
  const pool = db.pool();
  const at = await poolWithDevices(1);
  const id = await insertRunningJob(pool, { ...at, device: 0, name: 'paused-running', spec });
  await pool.query(`UPDATE jobs SET paused_at = now() WHERE id = $1`, [id]);
  const { d } = await runRound(pool);
  assert.deepEqual(
    d.preempt.map((p) => [p.jobId, p.reason]),
    [[id, 'pause']],
  );
  const row = (
    await pool.query(
      `SELECT preempt_reason, preempt_requested_at IS NOT NULL AS noticed FROM jobs WHERE id = $1`,
      [id],
    )
  ).rows[0];
  assert.deepEqual(row, { preempt_reason: 'pause', noticed: true });
  const ev = await pool.query(
    `SELECT data->>'reason' AS reason FROM job_events WHERE job_id = $1 AND type = 'job.preempting'`,
    [id],
  );
  assert.deepEqual(ev.rows, [{ reason: 'pause' }]);
  // Noticed once: the next round leaves it be.
  assert.deepEqual((await runRound(pool)).d.preempt, []);
});

it('a job resumed after its preemption keeps no devices and no claim from it', async () => {
  const pool = db.pool();
  const at = await poolWithDevices(2);
  const id = (
    await pool.query(
      `INSERT INTO jobs (tenant_id, name, spec, status, pool, devices, requeue_reason, attempts, interruptions)
       VALUES ($1, 'moved', $2, 'queued', $3, 1, 'preempted', 1, 1) RETURNING id`,
      [at.tenantId, spec, at.pool],
    )
  ).rows[0].id as string;
  const event = (type: string, data: object) =>
    pool.query(`INSERT INTO job_events (job_id, type, data) VALUES ($1, $2, $3)`, [id, type, data]);
  // Moved by compaction for a wider job: it returns to the devices chosen for it, first.
  const wide = '00000000-0000-4000-8000-000000000001';
  await event('job.preempting', {
    reason: 'compact',
    forJobId: wide,
    moveTo: { nodeId: at.nodeId, devices: [1] },
  });
  await event('job.preempted', { status: 'preempted', reason: 'compact' });
  const mine = async () => (await readSnapshot(pool, 60_000)).snapshot.queued.find((q) => q.id === id)!;
  const before = await mine();
  assert.deepEqual(before.returnTo, { nodeId: at.nodeId, devices: [1] });
  assert.equal(before.returnFor, wide);
  // Paused and resumed since: it waits as any new arrival.
  await event('job.paused', { status: 'queued' });
  await event('job.resumed', { status: 'queued' });
  const after = await mine();
  assert.equal(after.returnTo, null);
  assert.equal(after.returnFor, null);
  assert.equal(after.preemptedFor, null);
});
