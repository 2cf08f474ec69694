/**
 * The API is down for longer than a worker's request retries (~16 s) while a job finishes. The
 * worker keeps the job's last checkpoint record and its outcome in its outbox on disk and delivers
 * them when the API is back: the job ends `succeeded` with its last checkpoint recorded, instead of
 * staying `running` with its final reports dropped.
 *
 * And an outage longer than a daemon may speak for its jobs (worker-node/supervision.ts) but shorter
 * than the node timeout: the job process stops itself, the node is never lost, and the run is
 * reported `lost_contact` once the API is back, using none of the job's attempts (before, it was
 * reported as a crash: a job with `maxAttempts: 1` failed).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../common/logger.js';
import { startApi } from '../../api/server.js';
import { freePort } from '../helpers/processes.js';
import {
  checkpointSteps,
  eventsOf,
  outboxRecords,
  startCluster,
  steadyJob,
  waitFor,
  waitForStatus,
  type Cluster,
} from '../helpers/cluster.js';

let c: Cluster;
before(async () => {
  // A fixed port, so that the API started again is where the worker looks for it; node liveness
  // long enough that the outage does not make the scheduler requeue the job.
  c = await startCluster({ nodeTimeoutMs: 300_000, env: { PORT: String(await freePort()) } });
});
after(() => c.close());

const STEPS = 30;

test(
  'checkpoint records and the outcome survive an API outage longer than the retries',
  { timeout: 300_000 },
  async () => {
    await c.startWorker('outage-node', 1);
    const t = await c.h.createTenant('patient');
    const id = (await t.as(c.h.http.post('/v1/jobs')).send(steadyJob('outage', STEPS)).expect(201)).body
      .id as string;
    await waitForStatus(c, t, id, ['running']);
    await waitFor('a first checkpoint', async () => (await checkpointSteps(c, t, id)).length > 0);

    await c.h.api.stop();
    const pending = () => outboxRecords(c, 'outage-node');
    await waitFor('the outcome to wait in the outbox', async () =>
      pending().some((r) => r.includes('"kind":"finish"')),
    );
    // Longer than the client's own retries (200 ms … 8 s, ~16 s in all) that used to end in a drop.
    await new Promise((r) => setTimeout(r, 20_000));
    assert.ok(pending().length >= 2, 'the last checkpoint and the outcome are still kept');

    c.h.api = await startApi(c.h.config, createLogger('api', c.h.config.LOG_LEVEL));
    const job = await waitForStatus(c, t, id, ['succeeded', 'failed']);
    assert.equal(job.status, 'succeeded', job.error ?? '');
    assert.ok((await checkpointSteps(c, t, id)).includes(STEPS), 'the final checkpoint is recorded');
    await waitFor('the outbox to empty', async () => pending().length === 0);
  },
);

test(
  "an outage that stops a daemon's job costs the job none of its attempts",
  { timeout: 300_000 },
  async () => {
    // Its own pool, and a node timeout of its own (1.5 s, the scheduler's is 300 s): its job process
    // stops about half a second into the outage, and the scheduler never finds the node lost.
    await c.startWorker('short-leash', 1, { pool: 'leash', env: { TIMESHARE_NODE_TIMEOUT_MS: '1500' } });
    const t = await c.h.createTenant('interrupted');
    const id = (
      await t
        .as(c.h.http.post('/v1/jobs'))
        .send({ ...steadyJob('cut-short', STEPS), pool: 'leash', maxAttempts: 1 })
        .expect(201)
    ).body.id as string;
    await waitForStatus(c, t, id, ['running']);
    await waitFor('a first checkpoint', async () => (await checkpointSteps(c, t, id)).length > 0);

    await c.h.api.stop();
    await waitFor('the stopped run to wait in the outbox', async () =>
      outboxRecords(c, 'short-leash').some((r) => r.includes('"kind":"finish"')),
    );
    c.h.api = await startApi(c.h.config, createLogger('api', c.h.config.LOG_LEVEL));

    const job = await waitForStatus(c, t, id, ['succeeded', 'failed']);
    assert.equal(job.status, 'succeeded', job.error ?? '');
    // Submission queues it without a reason; every return to the queue names one.
    const reasons = (await eventsOf(c, t, id))
      .filter((e) => e.type === 'job.queued' && e.data.reason)
      .map((e) => e.data.reason);
    assert.deepEqual(reasons, ['lost_contact']);
    assert.equal(job.attempts, 2, 'two runs, one of them the interrupted one');
  },
);
