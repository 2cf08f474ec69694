/**
 * The SDK retries what the API asks to be retried (sdk/src/retry.ts): a `rate_limited` 429 always,
 * after its Retry-After (the rate limiter refuses before anything is done), never a
 * `quota_exceeded` one (it stays refused until the tenant's jobs finish or its quota is raised); a
 * 502/503/504 or a failed connection only for requests safe to send twice (reads, PUT/DELETE, a
 * keyed submission); never a request its caller aborted.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTimeshareClient, unwrap } from '../../sdk/src/index.js';
import { retryingFetch } from '../../sdk/src/retry.js';
import { startHarness, type Harness } from '../helpers/api-harness.js';

/** A fetch that answers from a script, one entry per call, and records what it was sent. */
function scripted(answers: (number | 'refused')[], retryAfter = '', body = '{}') {
  const seen: { method: string; key: string | null; body: string }[] = [];
  const fetch = async (r: Request) => {
    seen.push({ method: r.method, key: r.headers.get('Idempotency-Key'), body: await r.text() });
    if (r.signal.aborted) throw r.signal.reason;
    const a = answers[seen.length - 1] ?? 200;
    if (a === 'refused') throw new TypeError('fetch failed');
    return new Response(body, { status: a, headers: retryAfter ? { 'Retry-After': retryAfter } : {} });
  };
  return { fetch, seen };
}

/** An error body as the API writes it (common/errors.ts). */
const errorBody = (code: string) =>
  JSON.stringify({ error: { type: 'rate_limit_error', code, message: code, param: null } });

test('a rate_limited 429 is retried for any request, after its Retry-After', async () => {
  const waits: number[] = [];
  const s = scripted([429, 429, 201], '3', errorBody('rate_limited'));
  const f = retryingFetch(s.fetch, { sleep: async (ms) => void waits.push(ms) });
  const res = await f(new Request('http://x/v1/jobs', { method: 'POST', body: '{"name":"a"}' }));
  assert.equal(res.status, 201);
  assert.deepEqual(waits, [3000, 3000]);
  assert.deepEqual(
    s.seen.map((x) => x.body),
    ['{"name":"a"}', '{"name":"a"}', '{"name":"a"}'],
    'each attempt sends the whole body',
  );
  // A 429 the API did not write (a limiter in front of it) is taken as a rate limit too.
  const proxied = scripted([429, 201], '1', 'Too Many Requests');
  const res2 = await retryingFetch(proxied.fetch, { sleep: async () => undefined })(
    new Request('http://x/v1/jobs', { method: 'POST', body: '{}' }),
  );
  assert.equal(res2.status, 201);
  assert.equal(proxied.seen.length, 2);
});

test('a quota_exceeded 429 is answered at once, body intact, whatever the method', async () => {
  for (const request of [
    new Request('http://x/v1/jobs', { method: 'POST', body: '{"name":"a"}' }),
    new Request('http://x/v1/jobs', { method: 'POST', headers: { 'Idempotency-Key': 'k' }, body: '{}' }),
    new Request('http://x/v1/jobs'),
  ]) {
    const waits: number[] = [];
    const s = scripted([429, 201], '', errorBody('quota_exceeded'));
    const res = await retryingFetch(s.fetch, { sleep: async (ms) => void waits.push(ms) })(request);
    assert.equal(res.status, 429);
    const body = (await res.json()) as { error: { code: string } };
    assert.equal(body.error.code, 'quota_exceeded', 'the caller still reads the body');
    assert.equal(s.seen.length, 1, request.method);
    assert.deepEqual(waits, []);
  }
});

test('a request its caller aborted is not sent again', async () => {
  const s = scripted([200]);
  const request = new Request('http://x/v1/jobs', { signal: AbortSignal.abort() });
  await assert.rejects(retryingFetch(s.fetch, { sleep: async () => undefined })(request), {
    name: 'AbortError',
  });
  assert.equal(s.seen.length, 1);
});

test('a 503 or a refused connection is retried only where sending twice is safe', async () => {
  const sleep = async () => undefined;
  // A submission without a key might have been taken: not sent again.
  let s = scripted([503]);
  assert.equal(
    (await retryingFetch(s.fetch, { sleep })(new Request('http://x/v1/jobs', { method: 'POST' }))).status,
    503,
  );
  assert.equal(s.seen.length, 1);
  s = scripted(['refused']);
  await assert.rejects(
    retryingFetch(s.fetch, { sleep })(new Request('http://x/v1/jobs', { method: 'POST' })),
  );
  assert.equal(s.seen.length, 1);
  // With an Idempotency-Key it is, under the same key.
  s = scripted([503, 'refused', 201]);
  const keyed = new Request('http://x/v1/jobs', {
    method: 'POST',
    headers: { 'Idempotency-Key': 'k1' },
    body: '{}',
  });
  assert.equal((await retryingFetch(s.fetch, { sleep })(keyed)).status, 201);
  assert.deepEqual(
    s.seen.map((x) => x.key),
    ['k1', 'k1', 'k1'],
  );
  // Reads are, up to the limit; then the last answer is the caller's.
  s = scripted([502, 504, 503, 200]);
  assert.equal((await retryingFetch(s.fetch, { sleep })(new Request('http://x/v1/jobs'))).status, 503);
  assert.equal(s.seen.length, 3, 'the first try and 2 retries');
  s = scripted([503]);
  assert.equal(
    (await retryingFetch(s.fetch, { sleep, maxRetries: 0 })(new Request('http://x/v1/jobs'))).status,
    503,
  );
  // Other errors are answers, not retried.
  s = scripted([400, 200]);
  assert.equal((await retryingFetch(s.fetch, { sleep })(new Request('http://x/v1/jobs'))).status, 400);
  assert.equal(s.seen.length, 1);
});

let h: Harness;
before(async () => {
  // 2 requests a second per tenant (a burst of 4).
  h = await startHarness({ TIMESHARE_RATE_LIMIT_PER_SECOND: '2' });
});
after(() => h.close());

test(
  'against the API: a tenant over its request rate gets every answer, a little later',
  { timeout: 60_000 },
  async () => {
    const t = await h.createTenant();
    const patient = createTimeshareClient({ baseUrl: h.api.url, token: t.token });
    const submitted = [];
    for (let i = 0; i < 8; i++)
      submitted.push(
        await unwrap(
          patient.POST('/v1/jobs', {
            body: { name: `burst-${i}`, workflow: { task: { name: 'addition' } } },
          }),
        ),
      );
    assert.equal(new Set(submitted.map((j) => j.id)).size, 8, 'each submission made one job');
    const listed = await unwrap(patient.GET('/v1/jobs', { params: { query: { limit: 50 } } }));
    assert.equal(listed.data.length, 8);
    // Without retries the same pace is refused.
    const hasty = createTimeshareClient({ baseUrl: h.api.url, token: t.token, retry: { maxRetries: 0 } });
    const statuses = [];
    for (let i = 0; i < 8; i++)
      statuses.push((await hasty.GET('/v1/jobs', { params: { query: { limit: 1 } } })).response.status);
    assert.ok(statuses.includes(429), `statuses: ${statuses}`);
  },
);

test('against the API: a submission over the quota is sent once', async () => {
  const t = await h.createTenant(undefined, { maxActiveJobs: 0 });
  let sent = 0;
  const client = createTimeshareClient({
    baseUrl: h.api.url,
    token: t.token,
    fetch: (input, init) => {
      sent++;
      return fetch(input, init);
    },
  });
  await assert.rejects(
    unwrap(client.POST('/v1/jobs', { body: { name: 'over', workflow: { task: { name: 'addition' } } } })),
    { name: 'TimeshareError', status: 429, code: 'quota_exceeded' },
  );
  assert.equal(sent, 1, 'sent once: a retry would only be refused again');
});
