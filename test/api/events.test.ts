import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { notifyEvents } from '../../common/jobs/notify.js';
import { issueToken } from '../../api/auth/jwt.js';
import { createTimeshareClient, unwrap, type JobEvent } from '../../sdk/src/index.js';
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
function openStream(jobId: string, headers: Record<string, string> = {}, path = 'events') {
  const events: SseEvent[] = [];
  let onEvent: () => void = () => {};
  let ended = false;
  const req = http.get(`${h.api.url}/v1/jobs/${jobId}/${path}`, {
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

const submit = async (name: string) =>
  (
    await t
      .as(h.http.post('/v1/jobs'))
      .send({ name, workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body as { id: string };

const endsWithin = (done: Promise<void>, ms: number) =>
  Promise.race([done.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

test("a stream whose cursor lies past the job's final event ends once the job is final", async () => {
  // Event ids are global: a cursor from another job's stream can lie past all of this job's events.
  const job = await submit('past-cursor');
  const other = await submit('other');
  const ahead = await appendEvent(other.id, 'job.admitted', { status: 'admitted' });
  for (const path of ['events', 'events/stream']) {
    const j = path === 'events' ? job : await submit('past-cursor-2');
    const aheadNow =
      path === 'events' ? ahead : await appendEvent(other.id, 'job.placed', { status: 'placed' });
    const stream = openStream(j.id, { 'Last-Event-ID': String(BigInt(aheadNow) + 50n) }, path);
    // Opened while the job is not final: it waits, as it should.
    assert.equal(await endsWithin(stream.done, 300), false, `${path}: ended before the job did`);
    await t.as(h.http.post(`/v1/jobs/${j.id}/cancel`)).expect(200);
    const ended = await endsWithin(stream.done, 8_000);
    stream.close();
    assert.ok(ended, `${path}: the stream did not end after the job was cancelled`);
    assert.deepEqual(stream.events, [], 'every event of the job lies before the cursor');
  }
});

test("the events page pages by its string cursor through the SDK's types", async () => {
  const job = await submit('paged');
  for (const status of ['admitted', 'placed', 'running'])
    await appendEvent(job.id, `job.${status}`, { status });
  const client = createTimeshareClient({ baseUrl: h.api.url, token: t.token });
  // Typed by the generated schema: `page.data` is JobEvent[], `nextCursor` the next `after` (a string).
  const seen: JobEvent[] = [];
  let after: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await unwrap(
      client.GET('/v1/jobs/{id}/events', { params: { path: { id: job.id }, query: { limit: 2, after } } }),
    );
    pages++;
    seen.push(...page.data);
    if (page.nextCursor === null) break;
    after = page.nextCursor;
  }
  assert.deepEqual(
    seen.map((e) => e.type),
    ['job.queued', 'job.admitted', 'job.placed', 'job.running'],
  );
  assert.equal(pages, 2, 'a full last page has no cursor: no empty page after it');
  // The stream takes the page's cursor as its typed `Last-Event-ID` header.
  const { response } = await client.GET('/v1/jobs/{id}/events/stream', {
    params: { path: { id: job.id }, header: { 'Last-Event-ID': seen[1]!.id } },
    parseAs: 'stream',
  });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  while (!text.includes(`id: ${seen[3]!.id}\n`)) text += (await reader.read()).value ?? '';
  await reader.cancel();
  assert.doesNotMatch(text, new RegExp(`id: (${seen[0]!.id}|${seen[1]!.id})\n`));
  assert.match(text, new RegExp(`id: ${seen[2]!.id}\n`));
});

test('a stream ends when the token it was opened with expires', async () => {
  const job = await submit('expiring');
  const short = issueToken(h.config.TIMESHARE_JWT_SECRET, 2, { role: 'tenant', sub: t.id, keyId: 'short' });
  const opened = Date.now();
  const stream = openStream(job.id, { Authorization: `Bearer ${short.token}` }, 'events/stream');
  await stream.waitFor(1);
  assert.equal(stream.events[0]!.event, 'job.queued');
  const ended = await endsWithin(stream.done, 6_000);
  stream.close();
  assert.ok(ended, 'the stream outlived its token');
  assert.ok(Date.now() >= short.expiresAt.getTime() - 50, 'ended at the expiry, not before');
  assert.ok(Date.now() - opened < 5_000);
  // The same job's stream with a long-lived token stays open past that time.
  const long = openStream(job.id);
  await long.waitFor(1);
  assert.equal(await endsWithin(long.done, 300), false);
  long.close();
});
