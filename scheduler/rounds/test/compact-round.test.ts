// Compaction through real rounds against PostgreSQL: a 4-device job in a pool whose free devices
// are split over two nodes gets one node cleared. The moves are written as `compact` notices whose
// `job.preempting` events say where each job goes; the next snapshot reads that back, so nobody takes
// those devices while the moved jobs checkpoint; once they are back in the queue, each is placed on
// the devices kept for it and the wide job on the cleared node.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { requeueJob } from '../../../common/jobs/transitions.js';
import { insertRunningJob, runRound, useRoundDatabase } from './round-db.js';

const db = useRoundDatabase();
const round = () => runRound(db.pool());

const spec = (devices: number) => ({
  resources: { devices },
  workflow: { mode: 'temporal', steps: 1000, task: { name: 'addition', digits: 2 } },
});

it('clears a node for a wide job by moving its jobs to free devices kept for them', async () => {
  const pool = db.pool();
  const t = await pool.query(`INSERT INTO tenants (name) VALUES ('t-compact') RETURNING id`);
  const tenantId = t.rows[0].id as string;
  await pool.query(`INSERT INTO quotas (tenant_id, active_devices, active_jobs) VALUES ($1, 4, 4)`, [
    tenantId,
  ]);
  const p = await pool.query(
    `INSERT INTO pools (name, device_type) VALUES ('compact', 'cpu') RETURNING name`,
  );
  const nodes: string[] = [];
  for (const name of ['n-a', 'n-b']) {
    const n = await pool.query(
      `INSERT INTO nodes (name, pool_id, last_heartbeat_at) SELECT $1, id, now() FROM pools WHERE name = 'compact' RETURNING id`,
      [name],
    );
    nodes.push(n.rows[0].id);
    await pool.query(
      `INSERT INTO devices (node_id, index, kind, memory_bytes, free_memory_bytes)
       SELECT $1, i, 'cpu', 16e9, 16e9 FROM generate_series(0, 3) i`,
      [n.rows[0].id],
    );
  }
  // Two 1-device jobs on devices 0 and 1 of each node, running for an hour (past the minimum run time).
  const small: { id: string; nodeId: string; device: number }[] = [];
  for (const nodeId of nodes)
    for (const device of [0, 1]) {
      const id = await insertRunningJob(pool, {
        tenantId,
        pool: p.rows[0].name,
        nodeId,
        device,
        name: 'small',
        spec: spec(1),
      });
      small.push({ id, nodeId, device });
    }
  const other = await pool.query(`INSERT INTO tenants (name) VALUES ('t-wide') RETURNING id`);
  await pool.query(`INSERT INTO quotas (tenant_id) VALUES ($1)`, [other.rows[0].id]);
  const wide = (
    await pool.query(
      `INSERT INTO jobs (tenant_id, name, spec, status, pool, devices, queued_at)
       VALUES ($1, 'wide', $2, 'queued', $3, 4, now() - interval '1 minute') RETURNING id`,
      [other.rows[0].id, spec(4), p.rows[0].name],
    )
  ).rows[0].id as string;

  const first = await round();
  const moves = first.d.preempt.filter((m) => m.reason === 'compact');
  assert.equal(moves.length, 2, 'the two jobs of one node move');
  assert.ok(moves.every((m) => m.forJobId === wide));
  const cleared = small.find((s) => s.id === moves[0]!.jobId)!.nodeId;
  assert.ok(moves.every((m) => small.find((s) => s.id === m.jobId)!.nodeId === cleared));
  assert.ok(moves.every((m) => m.moveTo!.nodeId !== cleared));
  const notices = await pool.query(
    `SELECT job_id, data FROM job_events WHERE type = 'job.preempting' AND job_id = ANY($1::uuid[])`,
    [moves.map((m) => m.jobId)],
  );
  for (const m of moves) {
    const e = notices.rows.find((r) => r.job_id === m.jobId)!;
    assert.equal(e.data.reason, 'compact');
    assert.deepEqual(e.data.moveTo, m.moveTo, 'the event says where the job goes');
  }

  // While they checkpoint, the next snapshot knows where they go and whom they make room for.
  const during = await round();
  for (const m of moves) {
    const r = during.snapshot.running.find((x) => x.id === m.jobId)!;
    assert.deepEqual([r.preemptReason, r.preemptFor, r.returnTo], ['compact', wide, m.moveTo]);
  }
  assert.deepEqual(during.d.preempt, [], 'nothing more moves or is preempted');

  // The node reports each checkpoint: the jobs are back in the queue, and go where they were sent.
  for (const m of moves) await requeueJob(pool, m.jobId, cleared, null, 'preempted', null);
  const back = await round();
  for (const m of moves) {
    const q = back.snapshot.queued.find((x) => x.id === m.jobId)!;
    assert.deepEqual([q.returnTo, q.returnFor], [m.moveTo, wide], 'read back from its notice');
  }
  const placed = new Map(back.d.place.map((x) => [x.jobId, x]));
  for (const m of moves) {
    const x = placed.get(m.jobId)!;
    assert.deepEqual([x.nodeId, x.devices], [m.moveTo!.nodeId, m.moveTo!.devices]);
  }
  assert.deepEqual([placed.get(wide)?.nodeId, placed.get(wide)?.devices], [cleared, [0, 1, 2, 3]]);
});
