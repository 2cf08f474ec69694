// A withdrawn notice through whole rounds against PostgreSQL (scheduler/core/withdraw.ts): a paused
// job's `pause` notice, its tenant having resumed it before the job left, is cleared from its row in
// the round's transaction with a `job.preempt_withdrawn` event, and the node's assignment no longer
// carries it, so its daemon tells the job to run on. The grace then takes nothing back.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assignmentsOf } from '../../../common/jobs/assignments.js';
import { requeueJob } from '../../../common/jobs/transitions.js';
import { defaultPolicy } from '../../core/policy.js';
import { insertRunningJob, runRound, tenantPoolNode, useRoundDatabase } from './round-db.js';

const db = useRoundDatabase();
const spec = {
  resources: { devices: 1 },
  workflow: { mode: 'temporal', steps: 100, task: { name: 'addition' } },
};

it('a pause notice is withdrawn once the job is resumed: row, event and assignment', async () => {
  const pool = db.pool();
  const at = await tenantPoolNode(pool);
  await pool.query(
    `INSERT INTO devices (node_id, index, kind, memory_bytes, free_memory_bytes) VALUES ($1, 0, 'cpu', 16e9, 16e9)`,
    [at.nodeId],
  );
  const id = await insertRunningJob(pool, { ...at, device: 0, name: 'resumed', spec });
  await pool.query(`UPDATE jobs SET paused_at = now() WHERE id = $1`, [id]);
  assert.deepEqual(
    (await runRound(pool)).d.preempt.map((p) => [p.jobId, p.reason]),
    [[id, 'pause']],
  );
  assert.ok((await assignmentsOf(pool, at.nodeId))[0]!.preemptRequestedAt, 'the node is told');

  await pool.query(`UPDATE jobs SET paused_at = NULL WHERE id = $1`, [id]);
  // No grace at all: a notice standing would be taken back by this round.
  const { d } = await runRound(pool, { ...defaultPolicy, preemptGraceSeconds: 0 });
  assert.deepEqual(d.withdraw, [
    { jobId: id, tenantId: at.tenantId, reason: 'pause', because: 'job_resumed' },
  ]);
  assert.deepEqual(d.takeBack, []);
  const row = (
    await pool.query(`SELECT status::text, preempt_requested_at, preempt_reason FROM jobs WHERE id = $1`, [
      id,
    ])
  ).rows[0];
  assert.deepEqual(row, { status: 'running', preempt_requested_at: null, preempt_reason: null });
  const events = await pool.query(
    `SELECT data - 'epoch' - 'queueSeq' AS data FROM job_events WHERE job_id = $1 AND type = 'job.preempt_withdrawn'`,
    [id],
  );
  assert.deepEqual(
    events.rows.map((e) => e.data),
    [{ reason: 'pause', because: 'job_resumed' }],
  );
  assert.equal((await assignmentsOf(pool, at.nodeId))[0]!.preemptRequestedAt, null);

  // Nothing more happens to it: the next round neither notices nor withdraws again.
  const next = (await runRound(pool)).d;
  assert.deepEqual([next.preempt, next.withdraw, next.takeBack], [[], [], []]);

  // Its checkpoint had begun before the withdrawal reached it: it leaves all the same, and says it
  // left for the withdrawn notice's reason (it said `admin`, an admin preemption nobody made).
  const { queue_seq: run } = (await pool.query(`SELECT queue_seq FROM jobs WHERE id = $1`, [id])).rows[0];
  assert.ok(await requeueJob(pool, id, at.nodeId, run, 'preempted', null));
  const left = await pool.query(
    `SELECT data->>'reason' AS reason FROM job_events WHERE job_id = $1 AND type = 'job.preempted'`,
    [id],
  );
  assert.deepEqual(
    left.rows.map((e) => e.reason),
    ['pause'],
  );
});
