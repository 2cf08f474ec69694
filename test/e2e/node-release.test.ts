/**
 * An admin releases a node from its key (POST /v1/nodes/{id}/release) while its job runs. The
 * daemon's heartbeats are refused, its job stops itself, and the daemon registers the node again
 * once the fence has passed: the node is ready under the same id and the job resumes on it from its
 * checkpoint. Before, the daemon logged the refusal forever and the node stayed lost until the
 * daemon was restarted by hand.
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

test(
  'a released node registers again once fenced, and its job resumes on it',
  { timeout: 240_000 },
  async () => {
    await c.startWorker('released', 1);
    const t = await c.h.createTenant('release');
    const id = (await t.as(c.h.http.post('/v1/jobs')).send(steadyJob('on-released', 2000)).expect(201)).body
      .id as string;
    await waitForStatus(c, t, id, ['running']);
    await waitFor('a checkpoint', async () => ((await checkpointSteps(c, t, id)).length ? true : null));
    const nodes = (await c.h.admin(c.h.http.get('/v1/nodes')).expect(200)).body.data;
    const node = nodes.find((n: { name: string }) => n.name === 'released');
    await c.h.admin(c.h.http.post(`/v1/nodes/${node.id}/release`)).expect(200);

    const back = await waitFor(
      'the node ready again',
      async () => {
        const list = (await c.h.admin(c.h.http.get('/v1/nodes')).expect(200)).body.data;
        const n = list.find((x: { name: string }) => x.name === 'released');
        return n?.status === 'ready' && n.id === node.id ? n : null;
      },
      60_000,
    );
    assert.equal(back.id, node.id, 'the same node');
    const resumed = await waitFor(
      'the job running again',
      async () => {
        const runs = (await eventsOf(c, t, id)).filter((e) => e.type === 'job.running');
        return runs.length === 2 ? runs[1]! : null;
      },
      60_000,
    );
    assert.ok(Number(resumed.data.resumedFromStep) > 0, 'from its checkpoint, not from scratch');
    await t.as(c.h.http.post(`/v1/jobs/${id}/cancel`)).expect(200);
    await waitForStatus(c, t, id, ['cancelled']);
  },
);
