/**
 * The API is down for longer than a worker's request retries while a job finishes. The worker keeps
 * the job's last checkpoint record and its outcome in its outbox on disk and delivers them when the
 * API is back: the job ends `succeeded` with its last checkpoint recorded, instead of staying
 * `running` with its final reports dropped. (The worker's retries are shortened here,
 * TIMESHARE_API_RETRY_MS, and the test waits until a try of its outcome has run out of them, where
 * it waited out the default's ~16 s with a fixed 20 s.)
 *
 * And an outage longer than a daemon may speak for its jobs (worker-node/supervision.ts) but shorter
 * than the node timeout: the job process stops itself, the node is never lost, and the run is
 * reported `lost_contact` once the API is back, using none of the job's attempts (before, it was
 * reported as a crash: a job with `maxAttempts: 1` failed).
 *
 * And an outage that ends before the job's deadline (2 × supervision after the send of the last
 * accepted heartbeat): the job runs on, one run. Before, a job process stopped once it had not
 * heard from its daemon for one supervision time, and the daemon fell silent once its lease was one
 * supervision time old: a heartbeat answered a few seconds late (an API restart, a stall) stopped
 * every job on the node though the node was nowhere near its timeout (a QA pass, 4 of 4 jobs).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../common/logger.js';
import { startApi } from '../../api/server.js';
import { freePort } from '../helpers/processes.js';
import { startOutageProxy } from '../helpers/outage-proxy.js';
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
    // Retries of 2 s in all where the default's take ~16 s: an outage outlasts them all the same.
    // (Shorter ones made more tries while the job ran, each doubling the outbox's backoff, up to
    // 15 s, which then delayed both the try of the outcome and the delivery once the API is back.)
    // Its warnings are read below, whatever TEST_LOG_LEVEL says.
    const quiet = ['error', 'fatal', 'silent'].includes(c.env.LOG_LEVEL!);
    const worker = await c.startWorker('outage-node', 1, {
      env: { TIMESHARE_API_RETRY_MS: '500,1500', ...(quiet ? { LOG_LEVEL: 'warn' } : {}) },
    });
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
    // Longer than the client's own retries, which used to end in a drop: a try of every record, the
    // outcome among them, has run out of its retries, and the records are still there. The outbox
    // logs each batch it keeps with its size (report-outbox.ts); nothing is delivered during the
    // outage, so a batch as large as the outbox is now was taken with the outcome in it.
    const written = pending().length;
    const keptBatch = (line: string) => {
      try {
        const l = JSON.parse(line) as { msg?: string; kept?: number };
        return !!l.msg?.endsWith(': kept in the outbox') && (l.kept ?? 0) >= written;
      } catch {
        return false;
      }
    };
    await waitFor('a try of every record to run out of its retries', () =>
      worker.output().split('\n').slice(0, -1).some(keptBatch),
    );
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
    const backAt = Date.now();
    c.h.api = await startApi(c.h.config, createLogger('api', c.h.config.LOG_LEVEL));

    const job = await waitForStatus(c, t, id, ['succeeded', 'failed']);
    assert.equal(job.status, 'succeeded', job.error ?? '');
    // Submission queues it without a reason; every return to the queue names one.
    const requeues = (await eventsOf(c, t, id)).filter((e) => e.type === 'job.queued' && e.data.reason);
    assert.deepEqual(
      requeues.map((e) => e.data.reason),
      ['lost_contact'],
    );
    // Reported once the API was back, it says when the run really ended: during the outage.
    const endedAt = Date.parse(requeues[0]!.data.runEndedAt as string);
    assert.ok(endedAt < backAt, `${requeues[0]!.data.runEndedAt} is before the API came back`);
    assert.equal(job.attempts, 2, 'two runs, one of them the interrupted one');
  },
);

test(
  'an outage that ends before the deadline of the last accepted heartbeat stops no job',
  { timeout: 300_000 },
  async () => {
    // The worker reaches the API through a proxy the test cuts. Node timeout 12 s, heartbeat 3 s:
    // supervision 4.5 s, so a job may run to 9 s after the send of the last accepted heartbeat;
    // heartbeats are tried every 600 ms. The cut lasts 6.7 s from just after an accepted heartbeat:
    // the first try after it is accepted ~7.2 s after that send. Before, the job process stopped
    // about 7.9–9 s after it (one supervision time after the daemon's last word, which came before
    // its lease of 4.5 s ran out), and the answer at 7.2 s came after the daemon had fallen silent.
    const proxy = await startOutageProxy(c.h.api.url);
    try {
      await c.startWorker('late-answers', 1, {
        pool: 'late',
        env: {
          TIMESHARE_API_URL: proxy.url.replace(/\/$/, ''),
          TIMESHARE_NODE_TIMEOUT_MS: '12000',
          TIMESHARE_HEARTBEAT_MS: '3000',
        },
      });
      const t = await c.h.createTenant('unbothered');
      const id = (
        await t
          .as(c.h.http.post('/v1/jobs'))
          .send({ ...steadyJob('runs-through', 400), pool: 'late' })
          .expect(201)
      ).body.id as string;
      await waitForStatus(c, t, id, ['running']);
      await waitFor('a first checkpoint', async () => (await checkpointSteps(c, t, id)).length > 0);

      const beat = async () =>
        (
          await c.sql.query<{ at: Date }>(`SELECT last_heartbeat_at AS at FROM nodes WHERE name = $1`, [
            'late-answers',
          ])
        ).rows[0]!.at.getTime();
      const before = await beat();
      await waitFor('a heartbeat accepted', async () => (await beat()) !== before, 10_000, 20);
      // Its answer through the proxy first.
      await new Promise((r) => setTimeout(r, 250));
      proxy.down();
      await new Promise((r) => setTimeout(r, 6700));
      proxy.up();

      const upAt = Date.now();
      const stepAtUp = (await t.as(c.h.http.get(`/v1/jobs/${id}`)).expect(200)).body.progress.step as number;
      // Long enough for a stopped run to be reported: the deadline was ~2 s after the cut ended, and
      // a stopped run is reported at once (the API is reachable by then).
      await waitFor('the job to run on', async () => {
        const job = (await t.as(c.h.http.get(`/v1/jobs/${id}`)).expect(200)).body;
        return job.progress.step >= stepAtUp + 3 && Date.now() - upAt >= 5000;
      });
      const requeues = (await eventsOf(c, t, id)).filter((e) => e.type === 'job.queued' && e.data.reason);
      assert.deepEqual(
        requeues.map((e) => e.data.reason),
        [],
      );
      const job = (await t.as(c.h.http.get(`/v1/jobs/${id}`)).expect(200)).body;
      assert.equal(job.status, 'running');
      assert.equal(job.attempts, 1, 'one run throughout');
      await t.as(c.h.http.post(`/v1/jobs/${id}/cancel`)).expect(200);
      await waitForStatus(c, t, id, ['cancelled']);
    } finally {
      await proxy.close();
    }
  },
);
