/**
 * Webhooks end to end: API + scheduler + a worker + the dispatcher as a real process, and a local
 * receiver that verifies every request with the standardwebhooks library. A job that succeeds and
 * one that fails have every event delivered; a receiver that answers 500 three times gets the
 * message on the fourth try under the same webhook-id; a replay repeats that id; and deliveries
 * made while the dispatcher was down (killed) arrive after it restarts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { startCluster, waitFor, waitForStatus, eventsOf, type Cluster } from '../helpers/cluster.js';
import { startProcess, type Proc } from '../helpers/processes.js';
import type { TestTenant } from '../helpers/api-harness.js';
import { webhookEventTypes } from '../../webhooks/events.js';

interface Received {
  path: string;
  id: string;
  timestamp: number;
  body: string;
  headers: Record<string, string>;
  at: number;
  answered: number;
}

let c: Cluster;
let t: TestTenant;
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
const flakyTries = new Map<string, number>();
let dispatcher: Proc | null = null;

const dispatcherEnv = () => ({
  ...c.env,
  TIMESHARE_WEBHOOK_ALLOW_PRIVATE: 'true',
  TIMESHARE_WEBHOOK_POLL_MS: '100',
  TIMESHARE_WEBHOOK_RETRY_BASE_MS: '200',
  LOG_LEVEL: 'info',
});

async function startDispatcher(): Promise<Proc> {
  const p = startProcess('webhooks/main.ts', dispatcherEnv());
  await waitFor(
    'the dispatcher to start',
    async () => /webhook dispatcher started/.test(p.output()) || null,
    30_000,
  );
  return p;
}

before(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const id = headers['webhook-id'] ?? '';
      let answered = 204;
      if (req.url === '/flaky') {
        const n = (flakyTries.get(id) ?? 0) + 1;
        flakyTries.set(id, n);
        if (n <= 3) answered = 500;
      }
      received.push({
        path: req.url ?? '',
        id,
        timestamp: Number(headers['webhook-timestamp']),
        body,
        headers,
        at: Date.now(),
        answered,
      });
      res.writeHead(answered).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  c = await startCluster({ env: { TIMESHARE_WEBHOOK_ALLOW_PRIVATE: 'true' } });
  await c.startWorker('hook-node', 1);
  t = await c.h.createTenant('hooks');
  dispatcher = await startDispatcher();
});
after(async () => {
  await dispatcher?.kill('SIGTERM');
  await c.close();
  await new Promise((r) => receiver.close(r));
});

const job = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  maxAttempts: 1,
  workflow: {
    model: { preset: 'micro' },
    task: { name: 'addition', digits: 1 },
    steps: 2,
    promptsPerStep: 16,
    groupSize: 4,
    checkpointEvery: 2,
    evalEvery: 2,
    warmup: { maxSteps: 20, targetAccuracy: 0.2 },
    ...extra,
  },
});

/**
 * Every event of the job of a subscribable type reached `path` with a valid signature, and no other
 * (`job.plan_fitted` and the like are not sent); returns the payloads in order.
 */
async function deliveredEvents(path: string, secret: string, jobId: string) {
  const subscribable: readonly string[] = webhookEventTypes;
  const events = (
    (await eventsOf(c, t, jobId)) as unknown as {
      id: string;
      type: string;
      createdAt: string;
    }[]
  ).filter((e) => subscribable.includes(e.type));
  const wh = new Webhook(secret);
  const got = await waitFor(
    `every event of ${jobId} at ${path}`,
    async () => {
      const mine = received
        .filter((r) => r.path === path)
        .map((r) => ({
          r,
          payload: wh.verify(r.body, r.headers) as { type: string; data: Record<string, unknown> },
        }))
        .filter((x) => x.payload.data.jobId === jobId);
      const ids = new Set(mine.map((x) => x.payload.data.eventId));
      return events.every((e) => ids.has(e.id)) ? mine : null;
    },
    30_000,
  );
  const others = got.filter((x) => !subscribable.includes(x.payload.type));
  assert.deepEqual(
    others.map((x) => x.payload.type),
    [],
    'only subscribable types are sent',
  );
  return { events, got };
}

test(
  'every state change of a succeeding and a failing job is delivered, signed; retries, replays, restarts',
  { timeout: 300_000 },
  async () => {
    const all = (
      await t
        .as(c.h.http.post('/v1/webhooks'))
        .send({ url: `${receiverUrl}/all` })
        .expect(201)
    ).body;
    assert.match(all.secret, /^whsec_/);
    const flaky = (
      await t
        .as(c.h.http.post('/v1/webhooks'))
        .send({ url: `${receiverUrl}/flaky`, events: ['job.succeeded'] })
        .expect(201)
    ).body;
    const listed = (await t.as(c.h.http.get('/v1/webhooks')).expect(200)).body.data;
    assert.equal(listed.length, 2);
    assert.ok(
      listed.every((e: Record<string, unknown>) => !('secret' in e)),
      'the secret is shown once',
    );

    // 1. A job that succeeds, with the dispatcher running.
    const ok = (await t.as(c.h.http.post('/v1/jobs')).send(job('hook-ok')).expect(201)).body.id as string;
    assert.equal((await waitForStatus(c, t, ok, ['succeeded', 'failed'])).status, 'succeeded');
    const okDelivered = await deliveredEvents('/all', all.secret, ok);
    const types = okDelivered.got.map((x) => x.payload.type);
    for (const s of ['job.queued', 'job.admitted', 'job.placed', 'job.running', 'job.succeeded']) {
      assert.ok(types.includes(s), `${s} delivered`);
    }
    for (const x of okDelivered.got) {
      assert.match(x.r.id, /^msg_[0-9a-f-]{36}$/);
      assert.ok(Math.abs(x.r.timestamp * 1000 - x.r.at) < 10_000, 'webhook-timestamp is the send time');
    }
    // Latency from the event's row to the receiver, for the report.
    const latencies = okDelivered.got
      .map(
        (x) =>
          x.r.at - Date.parse(okDelivered.events.find((e) => e.id === x.payload.data.eventId)!.createdAt),
      )
      .sort((p, q) => p - q);
    console.log(
      `delivery latency ms: median ${latencies[Math.floor(latencies.length / 2)]}, max ${latencies.at(-1)}`,
    );

    // 2. The flaky receiver: 500, 500, 500, then 204 — four tries of one message, one webhook-id.
    const flakyMsg = await waitFor(
      'the fourth try at /flaky',
      async () => received.find((r) => r.path === '/flaky' && r.answered === 204) ?? null,
      30_000,
    );
    const tries = received.filter((r) => r.path === '/flaky' && r.id === flakyMsg.id);
    assert.deepEqual(
      tries.map((r) => r.answered),
      [500, 500, 500, 204],
    );
    assert.equal(new Set(tries.map((r) => r.body)).size, 1, 'the same message every time');
    // The receiver answers before the dispatcher records the answer: wait for the record.
    const flakyDeliveries = await waitFor(
      'the fourth try recorded',
      async () => {
        const page = (await t.as(c.h.http.get(`/v1/webhooks/${flaky.id}/deliveries`)).expect(200)).body.data;
        return page.length === 1 && page[0].status !== 'pending' ? page : null;
      },
      10_000,
    );
    assert.equal(flakyDeliveries.length, 1);
    assert.equal(flakyDeliveries[0].status, 'succeeded');
    assert.equal(flakyDeliveries[0].attempts, 4);
    assert.equal(flakyDeliveries[0].lastStatusCode, 204);
    assert.equal(flakyDeliveries[0].webhookId, flakyMsg.id);

    // 3. A replay sends it again under the same webhook-id: the receiver can tell it is a duplicate.
    await t
      .as(c.h.http.post(`/v1/webhooks/${flaky.id}/deliveries/${flakyDeliveries[0].id}/replay`))
      .expect(202);
    await waitFor(
      'the replay',
      async () => received.filter((r) => r.id === flakyMsg.id).length === 5 || null,
      30_000,
    );

    // 4. The dispatcher dies; a job fails meanwhile; a new dispatcher delivers all of it.
    await dispatcher!.kill('SIGKILL');
    const before = received.length;
    // A job with one attempt whose process dies: failed, with the cause.
    const bad = (
      await t
        .as(c.h.http.post('/v1/jobs'))
        .send(job('hook-fail', { steps: 2000, checkpointEvery: 1000 }))
        .expect(201)
    ).body.id as string;
    await waitForStatus(c, t, bad, ['running']);
    const nodes = (await c.h.admin(c.h.http.get('/v1/nodes')).expect(200)).body.data;
    const nodeId = nodes.find((n: { name: string }) => n.name === 'hook-node').id;
    const holder = await waitFor('a device-lock hold of the job', async () => {
      const r = await c.h.admin(c.h.http.get(`/v1/nodes/${nodeId}/timeline?limit=10000`)).expect(200);
      return (r.body.data as { job: string; holder: string }[]).filter((h) => h.job === bad).at(-1)?.holder;
    });
    process.kill(Number(holder.split(':').at(-1)), 'SIGKILL');
    const failed = await waitForStatus(c, t, bad, ['succeeded', 'failed']);
    assert.equal(failed.status, 'failed');
    assert.equal(received.length, before, 'nothing is sent while the dispatcher is down');
    dispatcher = await startDispatcher();
    const badDelivered = await deliveredEvents('/all', all.secret, bad);
    const failedEvent = badDelivered.got.find((x) => x.payload.type === 'job.failed');
    assert.ok(failedEvent, 'job.failed delivered');
    assert.equal(failedEvent.payload.data.status, 'failed');
    assert.ok(failedEvent.payload.data.error, 'with the cause');

    // The receiver has each request before the dispatcher records its answer: a delivery the
    // receiver just took may still read `pending` for a moment (a CI run under load saw one).
    const events = [...okDelivered.events, ...badDelivered.events];
    const allDeliveries = await waitFor(
      'every delivery recorded as succeeded',
      async () => {
        const list: { status: string }[] = (
          await t.as(c.h.http.get(`/v1/webhooks/${all.id}/deliveries?limit=500`)).expect(200)
        ).body.data;
        return list.length >= events.length && list.every((d) => d.status === 'succeeded') ? list : null;
      },
      30_000,
    );
    assert.equal(allDeliveries.length, events.length, 'one delivery per event');
  },
);
