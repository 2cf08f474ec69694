/**
 * `maxAttempts` is the runs a crashing job gets (docs/api.md), so runs the platform ended — by a
 * preemption (priority, reclaim, shrink, a move), a drain, or a daemon that lost the control plane
 * and stopped its job (`lost_contact`) — do not use it up. Before, every run counted: a job
 * preempted twice failed on its first crash with maxAttempts 3 (seen on npm start: preempted by a
 * `shrink`, drained, then one LockLostError, and `job.failed`), and its crash back-off doubled
 * once per preemption; drained runs and lost-contact runs still counted until session 23.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { acquireLease } from '../../../scheduler/rounds/leader.js';
import { readSnapshot } from '../../../scheduler/rounds/read-snapshot.js';
import {
  insertRunningJob,
  tenantPoolNode,
  useRoundDatabase,
} from '../../../scheduler/rounds/test/round-db.js';
import { requeueJob, startJob, type RequeueReason } from '../transitions.js';

const db = useRoundDatabase();

/** A running job on its node with no run counted yet: placed again and started, as a daemon would. */
async function runningJob(name: string) {
  const pool = db.pool();
  const at = await tenantPoolNode(pool);
  const spec = { resources: { devices: 1 }, workflow: { steps: 100, task: { name: 'addition' } } };
  const id = await insertRunningJob(pool, { ...at, device: 0, name, spec });
  const again = async () => {
    await pool.query(
      `UPDATE jobs SET status = 'placed', node_id = $2::uuid, placement = $3::jsonb, sched_epoch = $4
        WHERE id = $1`,
      [id, at.nodeId, { nodeId: at.nodeId, devices: [0] }, (await acquireLease(pool, 'test', 60_000))!.epoch],
    );
    await startJob(pool, id, at.nodeId, null, null);
  };
  await pool.query(`UPDATE jobs SET status = 'queued', node_id = NULL, placement = NULL WHERE id = $1`, [id]);
  await again();
  const status = async () => (await pool.query(`SELECT status FROM jobs WHERE id = $1`, [id])).rows[0].status;
  return { id, nodeId: at.nodeId, again, status };
}

/** Ends the job's runs in turn for these reasons, each but the last followed by the next run. */
async function endRuns(j: Awaited<ReturnType<typeof runningJob>>, reasons: RequeueReason[]) {
  for (const [i, reason] of reasons.entries()) {
    await requeueJob(db.pool(), j.id, j.nodeId, null, reason, reason === 'crashed' ? 'boom' : null);
    if (i < reasons.length - 1) await j.again();
  }
}

/** The job's attempts as the scheduler counts them for its crash back-off. */
async function backoffAttempts(id: string) {
  return (await readSnapshot(db.pool(), 60_000)).snapshot.queued.find((q) => q.id === id)?.attempts;
}

test('preempted runs do not count against maxAttempts, crashed ones do', async () => {
  const j = await runningJob('preempted-twice');
  await endRuns(j, ['preempted', 'preempted', 'crashed']);
  assert.equal(await j.status(), 'queued', 'a first crash after two preemptions is retried');
  // Its crash back-off counts its crashed run only: 5 s, not 5 × 2^2.
  assert.equal(await backoffAttempts(j.id), 1);

  const k = await runningJob('crashes');
  await endRuns(k, ['crashed', 'crashed', 'crashed']);
  assert.equal(await k.status(), 'failed', 'the third crash of maxAttempts 3 fails it');
});

test("drained and lost-contact runs do not count against maxAttempts; a lost node's run does", async () => {
  const j = await runningJob('drained-then-cut-off');
  await endRuns(j, ['drained', 'lost_contact', 'drained', 'crashed']);
  assert.equal(await j.status(), 'queued', 'a first crash after three interrupted runs is retried');
  assert.equal(await backoffAttempts(j.id), 1, 'its crash back-off counts the crashed run only');

  const k = await runningJob('node-lost');
  await endRuns(k, ['node_lost', 'node_lost', 'crashed']);
  assert.equal(await k.status(), 'failed', 'two lost nodes and a crash use maxAttempts 3');
});
