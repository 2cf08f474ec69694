/**
 * A daemon is paused (SIGSTOP) for longer than the node timeout, then continued: an operator's
 * stuck VM, a hung event loop. Its job processes are not paused with it. Once the scheduler has
 * given the job to another node, nothing on the paused node may still run it: a second run would
 * write the same checkpoint directories as the run the control plane recorded. When the daemon
 * comes back the job still finishes once, and every committed checkpoint matches its file.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { childCpuTicks } from '../helpers/processes.js';
import {
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

const STEPS = 200;

test(
  'a paused daemon: its job process stops before the job runs elsewhere, and the job finishes once',
  { timeout: 400_000 },
  async () => {
    const paused = await c.startWorker('paused', 1);
    const t = await c.h.createTenant('pausy');
    const id = (await t.as(c.h.http.post('/v1/jobs')).send(steadyJob('paused-run', STEPS)).expect(201)).body
      .id as string;
    await waitForStatus(c, t, id, ['running']);
    await waitFor(
      'a first checkpoint',
      async () => (await c.sql.query('SELECT 1 FROM checkpoints WHERE job_id = $1', [id])).rows.length > 0,
    );
    await c.startWorker('rescuer', 1);
    const pid = paused.child.pid!;
    process.kill(pid, 'SIGSTOP');
    try {
      await waitFor('the job running on the rescuer', async () => {
        const r = await c.sql.query(
          `SELECT j.status, n.name FROM jobs j JOIN nodes n ON n.id = j.node_id WHERE j.id = $1`,
          [id],
        );
        return r.rows[0]?.status === 'running' && r.rows[0].name === 'rescuer';
      });
      // The paused daemon forks nothing; whatever it had forked may linger idle, not run the job.
      const t0 = childCpuTicks(pid);
      await new Promise((r) => setTimeout(r, 3000));
      const t1 = childCpuTicks(pid);
      const busy = [...t1].map(([child, ticks]) => ticks - (t0.get(child) ?? ticks));
      assert.ok(
        busy.every((ticks) => ticks < 10),
        `a process of the paused node still runs the job: ${busy.join(', ')} ticks in 3 s`,
      );
    } finally {
      process.kill(pid, 'SIGCONT');
    }

    const job = await waitForStatus(c, t, id, ['succeeded', 'failed', 'cancelled'], 300_000);
    assert.equal(job.status, 'succeeded', job.error ?? '');
    const events = await eventsOf(c, t, id);
    assert.ok(events.some((e) => e.type === 'job.queued' && e.data.reason === 'node_lost'));
    assert.equal(events.filter((e) => e.type === 'job.succeeded').length, 1);
    const records = await c.sql.query(`SELECT step, sha256, storage_key FROM checkpoints WHERE job_id = $1`, [
      id,
    ]);
    for (const r of records.rows) {
      const file = readFileSync(path.join(c.h.config.TIMESHARE_STORAGE_ROOT, r.storage_key));
      assert.equal(createHash('sha256').update(file).digest('hex'), r.sha256, `checkpoint of step ${r.step}`);
    }
  },
);
