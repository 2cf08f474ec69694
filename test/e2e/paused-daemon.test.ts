/**
 * A daemon is paused (SIGSTOP) for longer than the node timeout, then continued: an operator's
 * stuck VM, a hung event loop. Its job processes are not paused with it. Once the scheduler has
 * given the job to another node, nothing on the paused node may still run it: a second run would
 * write the same checkpoint directories as the run the control plane recorded. When the daemon
 * comes back the job still finishes once, and every committed checkpoint matches its file.
 */
import { after, before, test } from 'node:test';
import { startCluster, steadyJob, waitFor, waitForStatus, type Cluster } from '../helpers/cluster.js';
import { childrenIdle, finishedOnce, runningOn } from '../helpers/run-once.js';

let c: Cluster;
before(async () => {
  c = await startCluster({ nodeTimeoutMs: 2000 });
});
after(() => c.close());

const STEPS = 80;

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
      await runningOn(c, id, 'rescuer');
      // The paused daemon forks nothing; whatever it had forked may linger idle, not run the job.
      await childrenIdle(pid, 'paused');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await finishedOnce(c, t, id);
  },
);
