// Spreading out through real rounds against PostgreSQL: two jobs crowd one device of a node whose
// other device is free, and nobody waits. One moves (`spread`): its `job.preempting` event says
// where; the next snapshot reads that back, so nobody takes the device while it checkpoints; back
// in the queue, it is placed there first.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { requeueJob } from '../../../common/jobs/transitions.js';
import { defaultPolicy } from '../../core/policy.js';
import { insertRunningJob, runRound, tenantPoolNode, useRoundDatabase } from './round-db.js';

const db = useRoundDatabase();
const round = () => runRound(db.pool(), { ...defaultPolicy, spreadWhenIdle: true });

// Many steps left: the time the move saves pays for it many times over.
const spec = {
  resources: { devices: 1 },
  workflow: { mode: 'temporal', steps: 1_000_000, task: { name: 'addition', digits: 2 } },
};

it('moves a job off a crowded device onto a free one once nobody waits', async () => {
  const pool = db.pool();
  const { tenantId, pool: poolName, nodeId } = await tenantPoolNode(pool);
  await pool.query(`UPDATE nodes SET last_heartbeat_at = now() WHERE id = $1`, [nodeId]);
  await pool.query(
    `INSERT INTO devices (node_id, index, kind, memory_bytes, free_memory_bytes)
     SELECT $1, i, 'cpu', 16e9, 16e9 FROM generate_series(0, 1) i`,
    [nodeId],
  );
  // Both on device 0 (on the planner's prior, 80% busy each), placed an hour ago.
  const jobs: string[] = [];
  for (const name of ['a', 'b'])
    jobs.push(await insertRunningJob(pool, { tenantId, pool: poolName, nodeId, device: 0, name, spec }));

  const first = await round();
  assert.equal(first.d.preempt.length, 1);
  const m = first.d.preempt[0]!;
  assert.deepEqual([m.reason, m.forJobId, m.moveTo], ['spread', m.jobId, { nodeId, devices: [1] }]);
  const e = await pool.query(`SELECT data FROM job_events WHERE type = 'job.preempting' AND job_id = $1`, [
    m.jobId,
  ]);
  assert.deepEqual([e.rows[0].data.reason, e.rows[0].data.moveTo], ['spread', m.moveTo]);

  const during = await round();
  const r = during.snapshot.running.find((x) => x.id === m.jobId)!;
  assert.deepEqual([r.preemptReason, r.returnTo], ['spread', m.moveTo]);
  assert.deepEqual(during.d.preempt, [], 'the partner left behind is alone: nothing more moves');

  await requeueJob(pool, m.jobId, nodeId, null, 'preempted', null);
  const back = await round();
  const q = back.snapshot.queued.find((x) => x.id === m.jobId)!;
  assert.deepEqual([q.returnTo, q.returnFor], [m.moveTo, m.jobId]);
  const placed = back.d.place.find((x) => x.jobId === m.jobId);
  assert.deepEqual([placed?.nodeId, placed?.devices], [nodeId, [1]]);
  assert.equal(placed?.sharedWith, 0);
});
