/**
 * The scheduler dies between marking a silent node lost and requeueing its jobs (two statements,
 * not one transaction). The node is `lost` from then on, so a sweep that only looked at nodes it
 * had just marked left the job `running` on it for good. The scheduler that carries on requeues
 * it, and the job finishes on another node from its checkpoint.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  eventsOf,
  startCluster,
  steadyJob,
  waitFor,
  waitForStatus,
  type Cluster,
} from '../helpers/cluster.js';
import { startProcess, type Proc } from '../helpers/processes.js';

let c: Cluster;
const schedulers: Proc[] = [];
before(async () => {
  c = await startCluster({ nodeTimeoutMs: 2000 });
});
after(async () => {
  for (const s of schedulers) await s.kill('SIGTERM');
  await c.close();
});

test(
  'a scheduler killed between marking a node lost and requeueing: the next one requeues the job',
  { timeout: 300_000 },
  async () => {
    const doomed = await c.startWorker('doomed', 1);
    const t = await c.h.createTenant('stranded');
    const id = (await t.as(c.h.http.post('/v1/jobs')).send(steadyJob('stranded', 40)).expect(201)).body
      .id as string;
    await waitForStatus(c, t, id, ['running']);
    await waitFor(
      'a checkpoint',
      async () => (await c.sql.query('SELECT 1 FROM checkpoints WHERE job_id = $1', [id])).rows.length > 0,
    );
    // Only the faulty scheduler sweeps when the node goes silent.
    await c.scheduler.kill('SIGTERM');
    const faulty = startProcess('scheduler/main.ts', { ...c.env, TIMESHARE_FAULT: 'crash_after_node_lost' });
    schedulers.push(faulty);
    await doomed.kill('SIGKILL');
    assert.equal(await faulty.exited, null, `killed by its fault:\n${faulty.output()}`);
    const node = await c.sql.query(`SELECT status FROM nodes WHERE name = 'doomed'`);
    assert.equal(node.rows[0].status, 'lost');

    schedulers.push(startProcess('scheduler/main.ts', c.env));
    await c.startWorker('rescuer', 1);
    await waitFor(
      'the job requeued from the lost node',
      async () =>
        (await eventsOf(c, t, id)).some((e) => e.type === 'job.queued' && e.data.reason === 'node_lost'),
      60_000,
    );
    const job = await waitForStatus(c, t, id, ['succeeded', 'failed']);
    assert.equal(job.status, 'succeeded', job.error ?? '');
    const runs = (await eventsOf(c, t, id)).filter((e) => e.type === 'job.running');
    assert.equal(runs.length, 2);
    assert.ok((runs[1]!.data.resumedFromStep as number) > 0, 'resumed from its checkpoint');
  },
);
