/**
 * A daemon is SIGKILLed mid-run. Its heartbeats stop, the scheduler marks the node lost and
 * requeues the job; the other daemon resumes it from its last committed checkpoint (not step 0),
 * and every step's metrics exist exactly once.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkpointSteps,
  eventsOf,
  startCluster,
  steadyJob,
  waitFor,
  waitForStatus,
  type Cluster,
} from '../helpers/cluster.js';

let c: Cluster;
before(async () => {
  c = await startCluster({ nodeTimeoutMs: 2000 });
});
after(() => c.close());

const STEPS = 60;

test(
  'SIGKILL of a daemon: its job finishes on the other daemon from the checkpointed step',
  { timeout: 300_000 },
  async () => {
    const doomed = await c.startWorker('doomed', 1);
    const t = await c.h.createTenant('crashy');
    const id = (await t.as(c.h.http.post('/v1/jobs')).send(steadyJob('survivor', STEPS)).expect(201)).body
      .id as string;
    await waitForStatus(c, t, id, ['running']);
    await c.startWorker('rescuer', 1);
    const before = await waitFor('two checkpoints', async () => {
      const steps = await checkpointSteps(c, t, id);
      return steps.length >= 2 ? steps : null;
    });
    await doomed.kill('SIGKILL');
    const killedAfter = Math.max(...(await checkpointSteps(c, t, id)));
    assert.ok(killedAfter >= before[1]!);

    const job = await waitForStatus(c, t, id, ['succeeded', 'failed']);
    assert.equal(job.status, 'succeeded', job.error ?? '');
    assert.equal(job.attempts, 2);

    const events = await eventsOf(c, t, id);
    const requeue = events.find((e) => e.type === 'job.queued' && e.data.reason === 'node_lost');
    assert.ok(requeue, 'the requeue says the node was lost');
    const runs = events.filter((e) => e.type === 'job.running');
    assert.equal(runs.length, 2);
    const resumedFrom = runs[1]!.data.resumedFromStep as number;
    assert.ok(resumedFrom >= killedAfter && resumedFrom > 0, `resumed from step ${resumedFrom}, not from 0`);

    // Every step's metrics exactly once, none missing.
    const rewards = (await t.as(c.h.http.get(`/v1/jobs/${id}/metrics?name=reward_mean`)).expect(200)).body
      .data;
    assert.deepEqual(
      rewards.map((m: { step: number }) => m.step),
      Array.from({ length: STEPS }, (_, i) => i + 1),
    );
    // The rescuer ran only the steps after the checkpoint.
    const nodes = (await c.h.admin(c.h.http.get('/v1/nodes')).expect(200)).body.data as {
      id: string;
      name: string;
      status: string;
    }[];
    const rescuer = nodes.find((n) => n.name === 'rescuer')!;
    assert.equal(nodes.find((n) => n.name === 'doomed')!.status, 'lost');
    const { rows } = await c.h.api.deps.db.pool.query(
      `SELECT min(step) AS first, max(step) AS last FROM stage_profiles WHERE job_id = $1 AND node_id = $2 AND stage = 'train'`,
      [id, rescuer.id],
    );
    assert.equal(rows[0].first, resumedFrom + 1);
    assert.equal(rows[0].last, STEPS);
    assert.ok((await checkpointSteps(c, t, id)).includes(STEPS));
  },
);
