/**
 * The SDK retries what the API asks to be retried (sdk/src/retry.ts): a 429 always, after its
 * Retry-After (the rate limiter refuses before anything is done); a 502/503/504 or a failed
 * connection only for requests safe to send twice (reads, PUT/DELETE, a keyed submission).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTimeshareClient, unwrap } from '../../sdk/src/index.js';
import { retryingFetch } from '../../sdk/src/retry.js';
import { startHarness, type Harness } from '../helpers/api-harness.js';

/** A fetch that answers from a script, one entry per call, and records what it was sent. */
function scripted(answers: (number | 'refused')[], retryAfter = '') {
  const seen: { method: string; key: string | null; body: string }[] = [];
  const fetch = async (r: Request) => {
    seen.push({ method: r.method, key: r.headers.get('Idempotency-Key'), body: await r.text() });
    const a = answers[seen.length - 1] ?? 200;
    if (a === 'refused') throw new TypeError('fetch failed');
    return new Response('{}', { status: a, headers: retryAfter ? { 'Retry-After': retryAfter } : {} });
  };
  return { fetch, seen };
}

test('a 429 is retried for any request, after its Retry-After', async () => {
  const waits: number[] = [];
  const s = scripted([429, 429, 201], '3');
  const f = retryingFetch(s.fetch, { sleep: async (ms) => void waits.push(ms) });
  const res = await f(new Request('http://x/v1/jobs', { method: 'POST', body: '{"name":"a"}' }));
  assert.equal(res.status, 201);
  assert.deepEqual(waits, [3000, 3000]);
  assert.deepEqual(
    s.seen.map((x) => x.body),
    ['{"name":"a"}', '{"name":"a"}', '{"name":"a"}'],
    'each attempt sends the whole body',
  );
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
