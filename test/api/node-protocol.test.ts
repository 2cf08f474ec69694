/**
 * The node protocol's version (common/node-protocol/version.ts): a daemon names it in the
 * `Timeshare-Node-Protocol` header; a request without one is version 1. The control plane accepts
 * the versions from its oldest to its own, and refuses any other on every route a daemon calls with
 * `400 node_protocol_unsupported` before anything is applied. The daemon's client keeps a report
 * so refused (it is not the control plane's last word: it takes the report once upgraded).
 *
 * Version 2 sends a metric value JSON cannot write by name ("NaN", "Infinity", "-Infinity"): a
 * diverged loss used to travel as null and its whole report was refused. Version 3 lets a
 * `succeeded` finish say why the run ended where it did (`reason`), shown in `job.succeeded`.
 * Version 4 lets a finish say when its run ended (`endedAt`), shown as the events' `runEndedAt`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type request from 'supertest';
import { NODE_PROTOCOL_HEADER, NODE_PROTOCOL_VERSION } from '../../common/node-protocol/index.js';
import {
  ControlPlaneClient,
  ControlPlaneError,
  isFinalAnswer,
} from '../../worker-node/control-plane-client.js';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';
import { oneDevice, placeOnNode, registerTestNode, type TestNode } from '../helpers/test-node.js';

let h: Harness;
let apiKey: string;
let node: TestNode['as'];
let nodeId: string;
const devices = oneDevice;

before(async () => {
  h = await startHarness();
  ({ as: node, id: nodeId, apiKey } = await registerTestNode(h, 'versioned'));
});
after(() => h.close());

/** A job of a new tenant's, placed on the node (no scheduler runs here). */
async function placedJob(): Promise<{ jobId: string; queueSeq: number; tenant: TestTenant }> {
  const tenant = await h.createTenant();
  const jobId = (
    await tenant
      .as(h.http.post('/v1/jobs'))
      .send({ name: 'versioned', workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body.id as string;
  return { jobId, queueSeq: await placeOnNode(h, nodeId, jobId), tenant };
}

/** A placed job started and finished by the node with `finish` under `protocol`: its events, and the job. */
async function finished(
  finish: object,
  protocol: string,
): Promise<{
  events: { type: string; data: Record<string, unknown>; createdAt: string }[];
  job: Record<string, unknown>;
}> {
  const client = new ControlPlaneClient(h.api.url, apiKey);
  const { jobId, queueSeq, tenant } = await placedJob();
  assert.equal(await client.jobStarted(nodeId, jobId, { queueSeq, resumedFromStep: null }), true);
  await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${jobId}/finish`))
    .set(NODE_PROTOCOL_HEADER, protocol)
    .send({ queueSeq, ...finish })
    .expect(200, { applied: true });
  return {
    events: (await tenant.as(h.http.get(`/v1/jobs/${jobId}/events`)).expect(200)).body.data,
    job: (await tenant.as(h.http.get(`/v1/jobs/${jobId}`)).expect(200)).body,
  };
}

test('every route a daemon calls refuses a protocol version it does not accept, and changes nothing', async () => {
  const { jobId, queueSeq } = await placedJob();
  const calls: [string, string, object | undefined][] = [
    ['post', '/v1/nodes/register', { name: 'versioned', devices }],
    ['post', `/v1/nodes/${nodeId}/heartbeat`, { devices: [] }],
    ['get', `/v1/nodes/${nodeId}/assignments`, undefined],
    ['post', `/v1/nodes/${nodeId}/jobs/${jobId}/start`, { queueSeq }],
    ['post', `/v1/nodes/${nodeId}/jobs/${jobId}/report`, { queueSeq, reportSeq: 1, deviceSeconds: 5 }],
    [
      'post',
      `/v1/nodes/${nodeId}/jobs/${jobId}/checkpoints`,
      { queueSeq, reportSeq: 2, step: 1, sizeBytes: 1, sha256: 'a'.repeat(64), meta: {} },
    ],
    ['post', `/v1/nodes/${nodeId}/jobs/${jobId}/finish`, { queueSeq, outcome: 'crashed', error: 'x' }],
    ['post', `/v1/nodes/${nodeId}/drain`, undefined],
  ];
  const state = async () =>
    (
      await h.api.deps.db.pool.query(
        `SELECT j.status, j.attempts, j.device_seconds, n.status AS node_status,
                (SELECT count(*)::int FROM checkpoints WHERE job_id = j.id) AS checkpoints
           FROM jobs j JOIN nodes n ON n.id = j.node_id WHERE j.id = $1`,
        [jobId],
      )
    ).rows[0];
  const before = await state();
  for (const version of [String(NODE_PROTOCOL_VERSION + 1), '0', 'one', '1.5']) {
    for (const [method, url, body] of calls) {
      const req = node((h.http as unknown as Record<string, (u: string) => request.Test>)[method]!(url));
      const res = await req.set(NODE_PROTOCOL_HEADER, version).send(body);
      assert.equal(res.status, 400, `${method} ${url} with version ${version}`);
      assert.equal(res.body.error.code, 'node_protocol_unsupported');
      assert.equal(res.body.error.param, NODE_PROTOCOL_HEADER);
      assert.match(res.body.error.message, /upgrade the control plane/);
    }
  }
  assert.deepEqual(await state(), before, 'nothing was applied');

  // The same calls as version 1, named or not (a daemon from before versions names none).
  await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${jobId}/start`))
    .set(NODE_PROTOCOL_HEADER, '1')
    .send({ queueSeq })
    .expect(200, { applied: true });
  await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${jobId}/report`))
    .send({ queueSeq, reportSeq: 1, deviceSeconds: 5 })
    .expect(200, { applied: true });
  assert.equal((await state()).status, 'running');
});

test("the daemon's client names its version and keeps a report a control plane refuses for it", async () => {
  const { jobId, queueSeq } = await placedJob();
  const client = new ControlPlaneClient(h.api.url, apiKey);
  assert.equal(await client.jobStarted(nodeId, jobId, { queueSeq, resumedFromStep: null }), true);
  // A record written by a daemon newer than this control plane.
  const err = await client
    .jobFinished(nodeId, jobId, { queueSeq, outcome: 'succeeded', error: null }, NODE_PROTOCOL_VERSION + 1)
    .then(
      () => null,
      (e: unknown) => e,
    );
  assert.ok(err instanceof ControlPlaneError, String(err));
  assert.equal(err.code, 'node_protocol_unsupported');
  assert.equal(isFinalAnswer(err), false, 'kept in the outbox, not dropped');
  assert.equal(
    await client.jobFinished(nodeId, jobId, { queueSeq, outcome: 'succeeded', error: null }),
    true,
    'its own version is taken',
  );
  const bad = await client
    .jobFinished(nodeId, jobId, { queueSeq: -1, outcome: 'succeeded', error: null })
    .then(
      () => null,
      (e: unknown) => e,
    );
  assert.ok(bad instanceof ControlPlaneError);
  assert.equal(bad.code, 'invalid_request');
  assert.equal(isFinalAnswer(bad), true, 'a malformed report is still refused for good');
});

test('metric values that are not finite are kept and read back by name', async () => {
  const { jobId, queueSeq, tenant } = await placedJob();
  const client = new ControlPlaneClient(h.api.url, apiKey);
  assert.equal(await client.jobStarted(nodeId, jobId, { queueSeq, resumedFromStep: null }), true);
  const values = [0.25, 'NaN', 'Infinity', '-Infinity'] as const;
  const names = ['reward_mean', 'loss', 'kl', 'clip_fraction'];
  await client.jobReport(nodeId, jobId, {
    queueSeq,
    reportSeq: 1,
    metrics: names.map((name, i) => ({ step: 3, name, value: values[i]! })),
    profiles: [],
    events: [],
    deviceSeconds: 0,
  });
  const { data } = (await tenant.as(h.http.get(`/v1/jobs/${jobId}/metrics`)).expect(200)).body;
  const got = Object.fromEntries(data.map((m: { name: string; value: unknown }) => [m.name, m.value]));
  assert.deepEqual(got, { reward_mean: 0.25, loss: 'NaN', kl: 'Infinity', clip_fraction: '-Infinity' });
  // What a version 1 daemon sent for them (JSON's null) is still refused, as before.
  await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${jobId}/report`))
    .set(NODE_PROTOCOL_HEADER, '1')
    .send({ queueSeq, reportSeq: 2, metrics: [{ step: 4, name: 'loss', value: null }] })
    .expect(400);
});

test('a succeeded finish says why the run ended, and one from an older daemon is taken without a reason', async () => {
  const succeeded = async (finish: object, protocol: string) => {
    const { events, job } = await finished({ outcome: 'succeeded', ...finish }, protocol);
    // The job says it too, not only its event: "succeeded at step 10 of 300" explains itself.
    const event = events.find((e) => e.type === 'job.succeeded')?.data;
    assert.equal(job.finishReason, event?.reason);
    return event;
  };
  assert.deepEqual(await succeeded({ reason: 'target_accuracy' }, '3'), {
    status: 'succeeded',
    error: null,
    reason: 'target_accuracy',
  });
  // Version 2 had no reason (its schema refused the field): still taken, the reason unknown.
  assert.deepEqual(await succeeded({ error: null }, '2'), { status: 'succeeded', error: null, reason: null });
  // A reason the protocol does not name is refused, as any malformed report.
  const { jobId, queueSeq } = await placedJob();
  const bad = await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${jobId}/finish`))
    .send({ queueSeq, outcome: 'succeeded', reason: 'bored' })
    .expect(400);
  assert.equal(bad.body.error.param, 'reason');
});

test('a finish says when its run ended: its events carry it, never later than its arrival', async () => {
  // The event its end wrote (the last; a job.queued without a reason is its submission).
  const ended = async (finish: object, protocol: string) =>
    (await finished(finish, protocol)).events
      .filter((e) => e.type !== 'job.queued' || 'reason' in e.data)
      .at(-1)! as {
      data: { runEndedAt?: string };
      createdAt: string;
    };
  // A run that stopped while the API was away, reported 20 s later from the outbox.
  const at = new Date(Date.now() - 20_000).toISOString();
  const lost = await ended({ outcome: 'lost_contact', endedAt: at }, '4');
  assert.equal(lost.data.runEndedAt, at);
  assert.ok(
    Date.parse(lost.createdAt) - Date.parse(at) >= 19_000,
    'the event itself is dated by its arrival',
  );
  const done = await ended({ outcome: 'succeeded', reason: 'steps_completed', endedAt: at }, '4');
  assert.equal(done.data.runEndedAt, at);
  // A clock ahead of the control plane's says no later than the arrival.
  const ahead = await ended(
    { outcome: 'preempted', endedAt: new Date(Date.now() + 3_600_000).toISOString() },
    '4',
  );
  assert.ok(Date.parse(ahead.data.runEndedAt!) <= Date.parse(ahead.createdAt) + 1000, ahead.data.runEndedAt);
  // Version 3 had no end time (its schema refused the field): still taken, without one.
  const older = await ended({ outcome: 'lost_contact' }, '3');
  assert.equal('runEndedAt' in older.data, false);
});
