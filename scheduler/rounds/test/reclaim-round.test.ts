// A reclaim through real rounds against PostgreSQL: the job a preemption made room for is read back
// with the victim, while the victim checkpoints (its notice's `forJobId`) and once it is back in the
// queue (`preemptedFor`), so the round gives the freed device to the preemptor before anyone else.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { requeueJob } from '../../../common/jobs/transitions.js';
import { defaultPolicy } from '../../core/policy.js';
import { insertRunningJob, runRound, useRoundDatabase } from './round-db.js';

const db = useRoundDatabase();
// At a group-load bound of 1.6 two jobs on the planner's prior (80% busy) do not share a device, so
// the owner's job needs a device back rather than joining the lender's.
const round = () => runRound(db.pool(), { ...defaultPolicy, maxGroupLoad: 1.6 });

const spec = {
  resources: { devices: 1 },
  workflow: { mode: 'temporal', steps: 1000, task: { name: 'addition', digits: 2 } },
};

it('reads back whom a reclaimed job made room for, and places that job on the freed device', async () => {
  const pool = db.pool();
  const tenant = async (name: string) => {
    const t = await pool.query(`INSERT INTO tenants (name) VALUES ($1) RETURNING id`, [name]);
    await pool.query(`INSERT INTO quotas (tenant_id) VALUES ($1)`, [t.rows[0].id]);
    return t.rows[0].id as string;
  };
  const [lender, owner] = [await tenant('t-lender'), await tenant('t-owner')];
  await pool.query(`INSERT INTO pools (name, device_type) VALUES ('reclaim', 'cpu')`);
  const node = await pool.query(
    `INSERT INTO nodes (name, pool_id, last_heartbeat_at) SELECT 'n-r', id, now() FROM pools WHERE name = 'reclaim' RETURNING id`,
  );
  const nodeId = node.rows[0].id as string;
  await pool.query(
    `INSERT INTO devices (node_id, index, kind, memory_bytes, free_memory_bytes)
     SELECT $1, i, 'cpu', 16e9, 16e9 FROM generate_series(0, 1) i`,
    [nodeId],
  );
  // The lender holds both devices, for an hour (past the minimum run time).
  const running: string[] = [];
  for (const device of [0, 1])
    running.push(
      await insertRunningJob(pool, { tenantId: lender, pool: 'reclaim', nodeId, device, name: 'lent', spec }),
    );
  const mine = (
    await pool.query(
      `INSERT INTO jobs (tenant_id, name, spec, status, pool, devices, queued_at)
       VALUES ($1, 'mine', $2, 'queued', 'reclaim', 1, now() - interval '1 minute') RETURNING id`,
      [owner, spec],
    )
  ).rows[0].id as string;

  const first = await round();
  assert.equal(first.d.preempt.length, 1, 'one device reclaimed');
  const victim = first.d.preempt[0]!;
  assert.deepEqual([victim.reason, victim.forJobId], ['reclaim', mine]);
  assert.ok(running.includes(victim.jobId));

  const during = await round();
  const v = during.snapshot.running.find((x) => x.id === victim.jobId)!;
  assert.deepEqual([v.preemptReason, v.preemptFor], ['reclaim', mine]);
  assert.deepEqual(during.d.preempt, [], 'nobody else is preempted for it');

  await requeueJob(pool, victim.jobId, nodeId, null, 'preempted', null);
  const after = await round();
  const q = after.snapshot.queued.find((x) => x.id === victim.jobId)!;
  assert.deepEqual([q.preemptedFor, q.returnTo, q.returnFor], [mine, null, null]);
  const placed = after.d.place.find((x) => x.jobId === mine);
  assert.deepEqual([placed?.nodeId, placed?.devices], [nodeId, [victim.jobId === running[0] ? 0 : 1]]);
});
