import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { notifyEvents } from '../../common/jobs/notify.js';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';

let h: Harness;
let t: TestTenant;
before(async () => {
  h = await startHarness();
  t = await h.createTenant('watcher');
});
after(() => h.close());

interface SseEvent {
  id: string;
  event: string;
  data: { id: string; type: string; data: Record<string, unknown> };
}

/** Opens an SSE stream and collects events until it ends (or `stopAfter` events arrived). */
function openStream(jobId: string, headers: Record<string, string> = {}) {
  const events: SseEvent[] = [];
  let onEvent: () => void = () => {};
  let ended = false;
  const req = http.get(`${h.api.url}/v1/jobs/${jobId}/events`, {
    headers: { Accept: 'text/event-stream', Authorization: `Bearer ${t.token}`, ...headers },
  });
  const done = new Promise<void>((resolve, reject) => {
    req.on('response', (res) => {
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /text\/event-stream/);
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const fields = Object.fromEntries(
            block
              .split('\n')
              .filter((l) => !l.startsWith(':'))
              .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]),
          );
          if (fields.id) {
            events.push({ id: fields.id, event: fields.event ?? '', data: JSON.parse(fields.data ?? '{}') });
            onEvent();
          }
        }
      });
      res.on('end', () => {
        ended = true;
        onEvent();
        resolve();
      });
    });
    req.on('error', reject);
  });
  return {
    events,
    done,
    isEnded: () => ended,
    async waitFor(n: number) {
      while (events.length < n && !ended) await new Promise<void>((r) => (onEvent = r));
      return events;
    },
    close: () => req.destroy(),
  };
}

async function appendEvent(jobId: string, type: string, data: object) {
  const r = await h.api.deps.db.pool.query(
    'INSERT INTO job_events (job_id, type, data) VALUES ($1, $2, $3) RETURNING id',
    [jobId, type, JSON.stringify(data)],
  );
  const eventId = String(r.rows[0].id);
  await notifyEvents(h.api.deps.redis, h.api.deps.names, jobId, [eventId]);
  return eventId;
}

test('SSE delivers history, then live events, and ends after the final state', async () => {
  const job = (
    await t
      .as(h.http.post('/v1/jobs'))
      .send({ name: 'sse', workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body;
  const stream = openStream(job.id);
  await stream.waitFor(1);
  assert.equal(stream.events[0]!.event, 'job.queued');
  await appendEvent(job.id, 'job.admitted', { status: 'admitted' });
  await stream.waitFor(2);
  assert.equal(stream.events[1]!.data.type, 'job.admitted');
  await t.as(h.http.post(`/v1/jobs/${job.id}/cancel`)).expect(200);
  await stream.done;
  assert.deepEqual(
    stream.events.map((e) => e.event),
    ['job.queued', 'job.admitted', 'job.cancelled'],
  );
  assert.ok(stream.isEnded());
});

test('a reconnecting stream resumes after Last-Event-ID without repeats', async () => {
  const job = (
    await t
      .as(h.http.post('/v1/jobs'))
      .send({ name: 'resume', workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body;
  const first = openStream(job.id);
  await first.waitFor(1);
  const seen = first.events[0]!.id;
  first.close();
  await appendEvent(job.id, 'job.admitted', { status: 'admitted' });
  await appendEvent(job.id, 'job.placed', { status: 'placed' });
  const second = openStream(job.id, { 'Last-Event-ID': seen });
  const got = await second.waitFor(2);
  assert.deepEqual(
    got.map((e) => e.event),
    ['job.admitted', 'job.placed'],
  );
  second.close();
  const page = await t.as(h.http.get(`/v1/jobs/${job.id}/events?after=${seen}&limit=1`)).expect(200);
  assert.equal(page.body.data.length, 1);
  assert.equal(page.body.data[0].type, 'job.admitted');
  assert.equal(page.body.nextCursor, page.body.data[0].id);
});

test('a stream of a finished job resumed at or after its final event ends at once', async () => {
  const job = (
    await t
      .as(h.http.post('/v1/jobs'))
      .send({ name: 'finished', workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body;
  await t.as(h.http.post(`/v1/jobs/${job.id}/cancel`)).expect(200);
  const page = await t.as(h.http.get(`/v1/jobs/${job.id}/events`)).expect(200);
  const finalId = page.body.data.at(-1).id as string;
  for (const headers of [{ 'Last-Event-ID': finalId }, { 'Last-Event-ID': String(Number(finalId) + 1000) }]) {
    const stream = openStream(job.id, headers);
    const ended = await Promise.race([
      stream.done.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 3_000)),
    ]);
    stream.close();
    assert.ok(ended, `the stream after ${headers['Last-Event-ID']} did not end`);
    assert.deepEqual(stream.events, []);
  }
  // Resumed before its final event, it sends the rest and ends as usual.
  const rest = openStream(job.id, { 'Last-Event-ID': page.body.data[0].id });
  await rest.done;
  assert.deepEqual(
    rest.events.map((e) => e.id),
    page.body.data.slice(1).map((e: { id: string }) => e.id),
  );
});
