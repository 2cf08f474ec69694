// The minimum run time counts from when a run starts (placed → running), read back from PostgreSQL:
// on a loaded machine a job was preempted 5 s before its first step when it counted from placement.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { startJob } from '../../../common/jobs/transitions.js';
import { kueueLikePolicy } from '../../core/policy.js';
import { runRound, tenantPoolNode, useRoundDatabase } from './round-db.js';

const db = useRoundDatabase();
// No time-sharing: the urgent job can only start on the low one's device.
const round = () => runRound(db.pool(), kueueLikePolicy);
const spec = {
  resources: { devices: 1 },
  workflow: { mode: 'temporal', steps: 1000, task: { name: 'addition', digits: 2 } },
};

it('protects a placed job until it has run the minimum run time since its run started', async () => {
  const pool = db.pool();
  const at = await tenantPoolNode(pool);
  await pool.query(`UPDATE nodes SET last_heartbeat_at = now() WHERE id = $1`, [at.nodeId]);
  await pool.query(
    `INSERT INTO devices (node_id, index, kind, memory_bytes, free_memory_bytes) VALUES ($1, 0, 'cpu', 16e9, 16e9)`,
    [at.nodeId],
  );
  const insert = async (name: string, priority: number) =>
    (
      await pool.query(
        `INSERT INTO jobs (tenant_id, name, spec, status, pool, devices, priority, queued_at, run_started_at)
         VALUES ($1, $2, $3, 'queued', $4, 1, $5, now() - interval '2 hours', now() - interval '2 hours')
         RETURNING id`,
        [at.tenantId, name, spec, at.pool, priority],
      )
    ).rows[0].id as string;
  const low = await insert('low', 0);
  const placed = await round();
  assert.deepEqual(
    placed.d.place.map((p) => p.jobId),
    [low],
  );
  // Placed an hour ago, its node never started it: not preemptible yet.
  await pool.query(`UPDATE jobs SET placed_at = now() - interval '1 hour' WHERE id = $1`, [low]);
  const urgent = await insert('urgent', 5);
  const waiting = await round();
  assert.equal(waiting.snapshot.running.find((r) => r.id === low)?.runningSince, null, 'placement clears it');
  assert.deepEqual(waiting.d.preempt, [], 'placed, not started');

  assert.ok(await startJob(pool, low, at.nodeId, null, null));
  const started = await round();
  const since = started.snapshot.running.find((r) => r.id === low)?.runningSince;
  assert.ok(
    since !== null && since !== undefined && Math.abs(since - Date.now()) < 60_000,
    'set when it starts',
  );
  assert.deepEqual(started.d.preempt, [], 'started less than a minimum run time ago');

  await pool.query(`UPDATE jobs SET run_started_at = now() - make_interval(secs => $2) WHERE id = $1`, [
    low,
    kueueLikePolicy.minRunSeconds + 1,
  ]);
  const ran = await round();
  assert.deepEqual(
    ran.d.preempt.map((p) => [p.jobId, p.reason, p.forJobId]),
    [[low, 'priority', urgent]],
  );
});
