// Re-planning through a real round against PostgreSQL: the snapshot reads a running job's stage
// profiles and its last re-planning event, schedule() decides, and the decision is written in the
// round's transaction — a move as a `replan` preemption notice plus a `job.replanned` event, a
// decline as `job.replan_declined` — and the next round does not decide again.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { requeueJob } from '../../../common/jobs/transitions.js';
import { defaultPolicy } from '../../core/policy.js';
import type { Policy } from '../../core/types.js';
import { readSnapshot } from '../read-snapshot.js';
import { autoJobSpec, runRound, tenantPoolNode, useRoundDatabase } from './round-db.js';

const db = useRoundDatabase();
/** A job running spatially on its own 2-device node, with 8 profiled temporal-shaped steps (6 past the warm-up) and `done` steps done. */
async function runningJob(done: number): Promise<string> {
  const pool = db.pool();
  const { tenantId, pool: poolName, nodeId } = await tenantPoolNode(pool);
  await pool.query(
    `INSERT INTO devices (node_id, index, kind, memory_bytes, free_memory_bytes) VALUES ($1, 0, 'cpu', 1e9, 1e9), ($1, 1, 'cpu', 1e9, 1e9)`,
    [nodeId],
  );
  const spec = autoJobSpec(2);
  const placement = {
    nodeId,
    devices: [0, 1],
    mode: 'spatial',
    stages: { generate: [0], train: [1] },
    microBatches: 4,
    threadsPerDevice: 1,
    memoryBytes: 1e8,
  };
  const j = await pool.query(
    `INSERT INTO jobs (tenant_id, name, spec, status, pool, node_id, placement, devices, placed_at, run_started_at)
     VALUES ($1, 'j', $2, 'running', $3, $4, $5, 2, now() - interval '10 minutes', now() - interval '10 minutes')
     RETURNING id`,
    [tenantId, spec, poolName, nodeId, placement],
  );
  const id = j.rows[0].id as string;
  for (let step = 1; step <= 8; step++)
    await pool.query(
      `INSERT INTO stage_profiles (job_id, node_id, stage, step, seconds, batch, devices, onload_seconds, offload_seconds, created_at)
       VALUES ($1, $2, 'generate', $3::int, 0.05, 512, 2, 0, 0, now() - interval '5 minutes' + $3::int * interval '0.5 s'),
              ($1, $2, 'train', $3::int, 0.406, 512, 2, 0.003, 0.003, now() - interval '5 minutes' + $3::int * interval '0.5 s')`,
      [id, nodeId, step],
    );
  // What its reports left on the row (common/jobs/job-report.ts).
  if (done > 0) await pool.query(`UPDATE jobs SET progress_step = $2 WHERE id = $1`, [id, done]);
  return id;
}

const round = async (policy?: Policy) => (await runRound(db.pool(), policy)).d;

const events = async (id: string) =>
  (await db.pool().query(`SELECT type, data FROM job_events WHERE job_id = $1 ORDER BY id`, [id])).rows as {
    type: string;
    data: Record<string, unknown>;
  }[];

it('moves a job whose profile favours another plan, declines one too close to its end, and decides each once', async () => {
  const pool = db.pool();
  const moved = await runningJob(0);
  const declined = await runningJob(998);
  const first = await round();
  assert.deepEqual(
    first.replan
      .filter((r) => r.kind !== 'fitted')
      .map((r) => [r.jobId, r.kind])
      .sort(),
    [
      [moved, 'move'],
      [declined, 'decline'],
    ].sort(),
  );
  // Both have run 6 profiled steps past the warm-up in their placement: the prediction fitted to them is recorded.
  assert.deepEqual(
    first.replan
      .filter((r) => r.kind === 'fitted')
      .map((r) => r.jobId)
      .sort(),
    [moved, declined].sort(),
  );
  const m = await events(moved);
  const replanned = m.find((e) => e.type === 'job.replanned')!;
  assert.ok(replanned, 'the move is recorded');
  assert.equal((replanned.data.from as { mode: string }).mode, 'spatial');
  assert.equal((replanned.data.to as { mode: string }).mode, 'temporal');
  assert.ok((replanned.data.predictedGainSeconds as number) > (replanned.data.moveCostSeconds as number));
  assert.equal(m.find((e) => e.type === 'job.preempting')?.data.reason, 'replan');
  const row = await pool.query(`SELECT preempt_reason FROM jobs WHERE id = $1`, [moved]);
  assert.equal(row.rows[0].preempt_reason, 'replan');
  const dec = (await events(declined)).find((e) => e.type === 'job.replan_declined')!;
  assert.ok((dec.data.predictedGainSeconds as number) <= (dec.data.moveCostSeconds as number));

  const fitted = (await events(declined)).find((e) => e.type === 'job.plan_fitted')!;
  assert.equal((fitted.data.to as { mode: string }).mode, 'spatial', 'the plan it runs');
  assert.equal(fitted.data.samples, 6);

  const second = await round();
  assert.equal(second.replan.length, 0, 'no decision repeated while nothing shifted, no fit recorded twice');
  assert.equal((await events(declined)).filter((e) => e.type.startsWith('job.replan')).length, 1);
});

it("reads a running spatial job at the split its placement records (a rebalance's, not the planner's)", async () => {
  const pool = db.pool();
  const id = await runningJob(0);
  // What the API writes when the node reports a `job.rebalanced` (common/jobs/node-events.ts).
  const placement = async (stages: { generate: number[]; train: number[] }) => {
    await pool.query(
      `UPDATE jobs SET placement = jsonb_set(placement, '{stages}', $2::jsonb) WHERE id = $1`,
      [id, JSON.stringify(stages)],
    );
    const read = await readSnapshot(pool, 60_000);
    return read.snapshot.running.find((r) => r.id === id)!.plan;
  };
  try {
    const asPlaced = await placement({ generate: [0], train: [1] });
    assert.deepEqual([asPlaced.mode, asPlaced.generateDevices, asPlaced.trainDevices], ['spatial', 1, 1]);
    await pool.query(
      `UPDATE jobs SET placement = jsonb_set(placement, '{devices}', '[0, 1, 2, 3]'::jsonb) WHERE id = $1`,
      [id],
    );
    const moved = await placement({ generate: [0, 1, 2], train: [3] });
    assert.deepEqual([moved.mode, moved.generateDevices, moved.trainDevices], ['spatial', 3, 1]);
    const back = await placement({ generate: [0], train: [1, 2, 3] });
    assert.deepEqual([back.generateDevices, back.trainDevices], [1, 3]);
    assert.notEqual(moved.predictedStepSeconds, back.predictedStepSeconds, 'each costed at its own split');
  } finally {
    await pool.query(`UPDATE jobs SET status = 'succeeded', node_id = NULL WHERE id = $1`, [id]);
  }
});

it('gives a job moved to a new plan its devices back first, ahead of a job queued before it', async () => {
  const pool = db.pool();
  const id = await runningJob(0);
  const row = (await pool.query(`SELECT node_id, pool, placement, tenant_id FROM jobs WHERE id = $1`, [id]))
    .rows[0];
  // Its placement as the round that placed it recorded it (apply-decisions.ts writes `job.placed`).
  await pool.query(`INSERT INTO job_events (job_id, type, data) VALUES ($1, 'job.placed', $2)`, [
    id,
    { status: 'placed', placement: row.placement },
  ]);
  const old = (
    await pool.query(
      `INSERT INTO jobs (tenant_id, name, spec, status, pool, devices, queued_at)
       VALUES ($1, 'old', $2, 'queued', $3, 2, now() - interval '30 minutes') RETURNING id`,
      [row.tenant_id, { resources: { devices: 2 }, workflow: { mode: 'temporal', steps: 10 } }, row.pool],
    )
  ).rows[0].id as string;
  try {
    await pool.query(`UPDATE nodes SET last_heartbeat_at = now() WHERE id = $1`, [row.node_id]);
    // One job per device throughout: the older job would otherwise join the job as a time-share
    // partner (before the move is decided, and after it comes back).
    const alone = { ...defaultPolicy, maxJobsPerDevice: 1 };
    const first = await round(alone);
    assert.deepEqual(
      first.preempt.map((p) => [p.jobId, p.reason]),
      [[id, 'replan']],
    );
    // While it checkpoints, the older job does not take or wait on its devices.
    assert.ok(!first.place.some((p) => p.jobId === old));
    // The node reports the checkpoint: the job is back in the queue (common/jobs/transitions.ts).
    await requeueJob(pool, id, row.node_id, null, 'preempted', null);
    const second = await round(alone);
    assert.deepEqual(
      second.place.map((p) => [p.jobId, p.nodeId, p.devices, p.mode]),
      [[id, row.node_id, [0, 1], 'temporal']],
    );
    assert.equal(second.queue.find((q) => q.jobId === old)?.waitReason, 'capacity');
  } finally {
    await pool.query(`UPDATE jobs SET status = 'succeeded', node_id = NULL WHERE id = ANY($1::uuid[])`, [
      [id, old],
    ]);
  }
});
