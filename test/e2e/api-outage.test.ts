/**
 * The API is down for longer than a worker's request retries (~16 s) while a job finishes. The
 * worker keeps the job's last checkpoint record and its outcome in its outbox on disk and delivers
 * them when the API is back: the job ends `succeeded` with its last checkpoint recorded, instead of
 * staying `running` with its final reports dropped.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../common/logger.js';
import { startApi } from '../../api/server.js';
import { freePort } from '../helpers/processes.js';
import {
  checkpointSteps,
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
    const outbox = c.outboxOf('outage-node');
    const pending = () => readdirSync(outbox).filter((f) => f.endsWith('.json'));
    await waitFor('the outcome to wait in the outbox', async () =>
      pending().some((f) => readFileSync(`${outbox}/${f}`, 'utf8').includes('"kind":"finish"')),
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
