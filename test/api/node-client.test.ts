/**
 * The worker daemon's client of the node API (worker-node/control-plane-client.ts) against a real
 * API that throttles it or forgets its token. A 429 is a request to slow down, not a refusal: the
 * client waits its `Retry-After` and sends again (it used to throw, and the outbox dropped the
 * report as refused for good: a checkpoint record lost). A token refused after an API restart with
 * another signing secret is exchanged again from the node key (it used to fail every request
 * until the token's expiry).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createLogger } from '../../common/logger.js';
import { startApi } from '../../api/server.js';
import {
  ControlPlaneClient,
  ControlPlaneError,
  isFinalAnswer,
} from '../../worker-node/control-plane-client.js';
import { startHarness, type Harness } from '../helpers/api-harness.js';
import { freePort } from '../helpers/processes.js';
import { placeOnNode } from '../helpers/test-node.js';
import { sweepLostNodes } from '../../scheduler/liveness.js';
import { apiPresentFor } from '../helpers/api-presence.js';

let h: Harness;
let client: ControlPlaneClient;
let nodeId: string;
const devices = [{ index: 0, kind: 'cpu-virtual', memoryBytes: 1e9, freeMemoryBytes: 1e9, threads: 1 }];

before(async () => {
  // 2 requests a second per node (a burst of 4), and a fixed port for the restart.
  h = await startHarness({ TIMESHARE_RATE_LIMIT_PER_SECOND: '2', PORT: String(await freePort()) });
  const key = await h.admin(h.http.post('/v1/node-keys')).send({ name: 'throttled' }).expect(201);
  client = new ControlPlaneClient(h.api.url, key.body.apiKey);
  nodeId = await client.register({ name: 'throttled', devices });
});
after(() => h.close());

async function runningJob(): Promise<{ jobId: string; queueSeq: number }> {
  const t = await h.createTenant();
  const jobId = (
    await t
      .as(h.http.post('/v1/jobs'))
      .send({ name: 'throttled', workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body.id as string;
  const queueSeq = await placeOnNode(h, nodeId, jobId);
  assert.equal(await client.jobStarted(nodeId, jobId, { queueSeq, resumedFromStep: null }), true);
  return { jobId, queueSeq };
}

test('a throttled node waits and sends again: every report lands', { timeout: 60_000 }, async () => {
  const { jobId, queueSeq } = await runningJob();
  const reports = Array.from({ length: 10 }, (_, i) => ({
    queueSeq,
    reportSeq: i + 1,
    metrics: [{ step: i + 1, name: 'loss', value: i }],
    profiles: [],
    events: [],
    deviceSeconds: 0,
  }));
  for (const r of reports) await client.jobReport(nodeId, jobId, r);
  const n = await h.api.deps.db.pool.query('SELECT count(*)::int AS n FROM metrics WHERE job_id = $1', [
    jobId,
  ]);
  assert.equal(n.rows[0].n, 10);
  // The same pace from a caller that does not wait is refused: the limiter was in the way.
  const tok = (await h.admin(h.http.post('/v1/node-keys')).send({ name: 'impatient' }).expect(201)).body
    .apiKey;
  const token = (await h.http.post('/v1/auth/token').send({ apiKey: tok }).expect(200)).body.token as string;
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++)
    statuses.push(
      (
        await h.http
          .get('/v1/nodes/00000000-0000-4000-8000-000000000000/assignments')
          .auth(token, { type: 'bearer' })
      ).status,
    );
  assert.ok(statuses.includes(429), `statuses: ${statuses}`);
  assert.equal(
    isFinalAnswer(new ControlPlaneError(429, 'slow down', 'rate_limited')),
    false,
    'an outbox keeps it',
  );
});

test('after an API restart with another signing secret the node exchanges its key again', async () => {
  await h.api.stop();
  h.api = await startApi(
    { ...h.config, TIMESHARE_JWT_SECRET: randomBytes(32).toString('hex') },
    createLogger('api', h.config.LOG_LEVEL),
  );
  await client.heartbeat(nodeId, [{ index: 0, freeMemoryBytes: 1e9 }]);
  assert.equal((await client.assignments(nodeId)).length, 1, 'the job of the test before');
  // A key the control plane does not know is refused for good.
  const stranger = new ControlPlaneClient(h.api.url, `tsk_${randomBytes(16).toString('hex')}`);
  const err = await stranger.heartbeat(nodeId, []).then(
    () => null,
    (e: unknown) => e,
  );
  assert.ok(err instanceof ControlPlaneError && err.status === 401, String(err));
  assert.equal(isFinalAnswer(err), true);
});

test('a daemon registering a node an admin released waits until its old runs are requeued', async () => {
  const oldKey = await h.admin(h.http.post('/v1/node-keys')).send({ name: 'old' }).expect(201);
  const old = new ControlPlaneClient(h.api.url, oldKey.body.apiKey);
  const released = await old.register({ name: 'released', devices });
  const t = await h.createTenant();
  const jobId = (
    await t
      .as(h.http.post('/v1/jobs'))
      .send({ name: 'held', workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body.id as string;
  const queueSeq = await placeOnNode(h, released, jobId);
  assert.equal(await old.jobStarted(released, jobId, { queueSeq, resumedFromStep: null }), true);
  await h.admin(h.http.post(`/v1/nodes/${released}/release`)).expect(200);

  const newKey = await h.admin(h.http.post('/v1/node-keys')).send({ name: 'new' }).expect(201);
  const waits: ControlPlaneError[] = [];
  const registering = new ControlPlaneClient(h.api.url, newKey.body.apiKey).register(
    { name: 'released', devices },
    (err) => waits.push(err),
  );
  while (waits.length < 2) await new Promise((r) => setTimeout(r, 50));
  assert.equal(waits[0]!.status, 409);
  assert.equal(waits[0]!.retryAfterSeconds, 1);
  // The node has been silent for the timeout: the sweep requeues its run, and the wait ends.
  await h.api.deps.db.pool.query(
    `UPDATE nodes SET last_heartbeat_at = now() - interval '1 hour' WHERE id = $1`,
    [released],
  );
  await apiPresentFor(h.api.deps.db.pool, 60_000);
  assert.equal(await sweepLostNodes({ ...h.api.deps, pool: h.api.deps.db.pool, timeoutMs: 15_000 }), 1);
  assert.equal(await registering, released);
  assert.equal((await t.as(h.http.get(`/v1/jobs/${jobId}`)).expect(200)).body.status, 'queued');
});
