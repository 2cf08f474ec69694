/**
 * Compaction against real processes: two 2-device nodes each hold one running 1-device job and one
 * free device, and a 2-device job is submitted. The scheduler moves one running job to the other
 * node's free device (a `compact` notice naming where it goes); the job checkpoints, resumes from
 * its checkpoint there, and the 2-device job runs on the node it left.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  QUICK_PREEMPTION_ENV,
  eventsOf,
  startCluster,
  steadyJob,
  waitFor,
  waitForStatus,
  type Cluster,
} from '../helpers/cluster.js';

let c: Cluster;

before(async () => {
  c = await startCluster({
    maxJobsPerDevice: 1,
    env: QUICK_PREEMPTION_ENV,
  });
  await c.startWorker('compact-a', 2);
  await c.startWorker('compact-b', 2);
});
after(() => c.close());

const nodeOf = async (id: string) =>
  (await c.sql.query(`SELECT node_id, placement FROM jobs WHERE id = $1`, [id])).rows[0] as {
    node_id: string | null;
    placement: { devices: number[] } | null;
  };

test(
  'a wide job gets a node by moving a running job to a free device elsewhere',
  { timeout: 300_000 },
  async () => {
    const t = await c.h.createTenant('compact');
    const submit = async (spec: object) =>
      (await t.as(c.h.http.post('/v1/jobs')).send(spec).expect(201)).body.id as string;
    // Four 1-device jobs fill both nodes (best fit: two on each), then one on each node is cancelled.
    const small: string[] = [];
    for (let i = 0; i < 4; i++) small.push(await submit(steadyJob(`small-${i}`, 5000)));
    for (const id of small) await waitForStatus(c, t, id, ['running']);
    const byNode = new Map<string, string[]>();
    for (const id of small) {
      const n = (await nodeOf(id)).node_id!;
      byNode.set(n, [...(byNode.get(n) ?? []), id]);
    }
    assert.deepEqual(
      [...byNode.values()].map((ids) => ids.length),
      [2, 2],
      'two on each node',
    );
    const stay = [...byNode.values()].map((ids) => ids[0]!);
    for (const ids of byNode.values()) await t.as(c.h.http.post(`/v1/jobs/${ids[1]}/cancel`)).expect(200);
    for (const id of stay)
      await waitFor('a checkpoint', async () =>
        (await eventsOf(c, t, id)).some((e) => e.type === 'job.checkpoint'),
      );
    await waitFor('the cancelled jobs gone', async () => {
      const r = await c.sql.query(
        `SELECT count(*)::int AS n FROM jobs WHERE status IN ('placed', 'running')`,
      );
      return r.rows[0].n === 2;
    });

    const wide = await submit({ ...steadyJob('wide', 20), resources: { devices: 2 } });
    const move = await waitFor('a compaction notice', async () => {
      for (const id of stay) {
        const e = (await eventsOf(c, t, id)).find((x) => x.type === 'job.preempting');
        if (e)
          return {
            id,
            data: e.data as {
              reason: string;
              forJobId: string;
              moveTo: { nodeId: string; devices: number[] };
            },
          };
      }
      return null;
    });
    assert.equal(move.data.reason, 'compact');
    assert.equal(move.data.forJobId, wide);
    const other = stay.find((id) => id !== move.id)!;
    const from = [...byNode].find(([, ids]) => ids.includes(move.id))![0];
    assert.equal(move.data.moveTo.nodeId, (await nodeOf(other)).node_id, 'to the node with the free device');

    // The moved job resumes from its checkpoint where it was sent; the wide job runs on the node it left.
    await waitFor('the moved job running again', async () =>
      (await eventsOf(c, t, move.id)).filter((e) => e.type === 'job.running').length === 2 ? true : null,
    );
    const moved = await nodeOf(move.id);
    assert.deepEqual(
      [moved.node_id, moved.placement?.devices],
      [move.data.moveTo.nodeId, move.data.moveTo.devices],
    );
    const runs = (await eventsOf(c, t, move.id)).filter((e) => e.type === 'job.running');
    assert.ok(Number(runs[1]!.data.resumedFromStep) > 0, 'resumed from its checkpoint');
    assert.equal((await waitForStatus(c, t, wide, ['succeeded', 'failed'])).status, 'succeeded');
    const placed = (await eventsOf(c, t, wide)).find((e) => e.type === 'job.placed')!;
    assert.equal((placed.data.placement as { nodeId: string }).nodeId, from, 'on the node the move cleared');
    for (const id of stay)
      await t.as(c.h.http.post(`/v1/jobs/${id}/cancel`)).expect((r) => [200, 409].includes(r.status));
  },
);
