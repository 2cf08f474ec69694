/**
 * An admin drains a node (POST /v1/nodes/{id}/cordon with `evict`) while a job runs on it, with real
 * scheduler and worker processes: the job gets a `drain` notice, checkpoints, goes back to the queue
 * (`job.preempted`, reason `drain`) and resumes from that checkpoint's step on the other node; the
 * node's daemon keeps it ready and heartbeating, yet nothing is placed on it again — neither the
 * evicted job nor one submitted after the cordon, though its device is free — until it is uncordoned.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkpointStepBefore,
  checkpointSteps,
  eventsOf,
  startCluster,
  steadyJob,
  waitFor,
  waitForStatus,
  type Cluster,
} from '../helpers/cluster.js';
import type { TestTenant } from '../helpers/api-harness.js';

let c: Cluster;
let t: TestTenant;
before(async () => {
  c = await startCluster({ env: { TIMESHARE_PREEMPT_GRACE_SECONDS: '15' } });
  t = await c.h.createTenant('cordon');
});
after(() => c.close());

const nodeNamed = async (name: string) =>
  (await c.h.admin(c.h.http.get('/v1/nodes')).expect(200)).body.data.find(
    (n: { name: string }) => n.name === name,
  ) as { id: string; status: string; cordon: { reason: string | null; evict: boolean } | null };

/** The nodes a job was placed on, in order. */
const placements = async (id: string) =>
  (await eventsOf(c, t, id))
    .filter((e) => e.type === 'job.placed')
    .map((e) => (e.data.placement as { nodeId: string }).nodeId);

test(
  'a drained node: its job checkpoints and resumes on the other node, nothing new lands on it',
  { timeout: 120_000 },
  async () => {
    await c.startWorker('to-drain', 1);
    const id = (await t.as(c.h.http.post('/v1/jobs')).send(steadyJob('drained', 2000)).expect(201)).body
      .id as string;
    await waitForStatus(c, t, id, ['running']);
    // The other node joins once the job runs on the first, so it cannot have started there.
    const [, , drained] = await Promise.all([
      c.startWorker('stays', 2),
      waitFor('a checkpoint', async () => ((await checkpointSteps(c, t, id)).length ? true : null)),
      nodeNamed('to-drain'),
    ]);
    const stays = await nodeNamed('stays');
    assert.deepEqual(await placements(id), [drained.id]);

    const cordoned = await c.h
      .admin(c.h.http.post(`/v1/nodes/${drained.id}/cordon`))
      .send({ reason: 'e2e maintenance', evict: true })
      .expect(200);
    assert.deepEqual(cordoned.body.cordon.evict, true);

    const resumed = await waitFor(
      'the job running again',
      async () => {
        const runs = (await eventsOf(c, t, id)).filter((e) => e.type === 'job.running');
        return runs.length === 2 ? runs[1]! : null;
      },
      60_000,
    );
    const events = await eventsOf(c, t, id);
    const notice = events.find((e) => e.type === 'job.preempting');
    assert.equal(notice?.data.reason, 'drain');
    const preempted = events.find((e) => e.type === 'job.preempted');
    assert.equal(preempted?.data.reason, 'drain');
    assert.equal(preempted?.data.nodeId, drained.id);
    const saved = checkpointStepBefore(events, 'job.preempted');
    assert.ok(saved > 0);
    assert.equal(resumed.data.resumedFromStep, saved, 'from the checkpoint it made when noticed');
    assert.deepEqual(await placements(id), [drained.id, stays.id]);

    // A job submitted now, with the drained node's device free: placed on the other node.
    const later = (await t.as(c.h.http.post('/v1/jobs')).send(steadyJob('after-cordon', 2000)).expect(201))
      .body.id as string;
    await waitForStatus(c, t, later, ['placed', 'running']);
    assert.deepEqual(await placements(later), [stays.id]);
    const node = await nodeNamed('to-drain');
    assert.equal(node.status, 'ready', "its daemon's status is its own");
    assert.deepEqual(node.cordon && { reason: node.cordon.reason, evict: node.cordon.evict }, {
      reason: 'e2e maintenance',
      evict: true,
    });
    const onIt = await c.sql.query(
      `SELECT count(*)::int AS n FROM jobs WHERE node_id = $1 AND status IN ('placed', 'running')`,
      [drained.id],
    );
    assert.equal(onIt.rows[0].n, 0);

    for (const job of [id, later]) await t.as(c.h.http.post(`/v1/jobs/${job}/cancel`)).expect(200);
    await Promise.all([id, later].map((job) => waitForStatus(c, t, job, ['cancelled'])));
  },
);
