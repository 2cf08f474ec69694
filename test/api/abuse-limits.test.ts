/**
 * Work the API does for callers without credentials is bounded: they are limited per client address
 * (and so is the token exchange, credentials or not), and refused before their body is read.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness } from '../helpers/api-harness.js';

let h: Harness;
before(async () => {
  // 1 request/s per address, burst 2; the body limit is small so that reading a body would show.
  h = await startHarness({ TIMESHARE_ADDRESS_RATE_LIMIT_PER_SECOND: '1', TIMESHARE_BODY_LIMIT: '1kb' });
});
after(() => h.close());

test('without credentials: 401 before the body is read, on both submission paths and admin routes', async () => {
  const big = { name: 'x'.repeat(4096) };
  for (const [path, body] of [
    ['/v1/jobs', big],
    ['/v1/jobs/', big],
    ['/v1/tenants', big],
  ] as const) {
    const res = await h.http.post(path).send(body);
    assert.equal(res.status, 401, `${path}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.error.code, 'unauthorized');
    // Exhausting the burst is the next test's business: wait out the refill here.
    await new Promise((r) => setTimeout(r, 1100));
  }
});

/**
 * Sends until one is limited (at most 8): the bucket refills a token a second, so on a machine busy
 * enough that requests take over half a second each the third is not always the one refused.
 */
async function untilLimited(send: () => Promise<{ status: number }>): Promise<number[]> {
  const statuses: number[] = [];
  while (statuses.length < 8 && statuses[statuses.length - 1] !== 429) statuses.push((await send()).status);
  return statuses;
}

test('requests without credentials and token exchanges are limited per client address', async () => {
  await new Promise((r) => setTimeout(r, 2100));
  const statuses = await untilLimited(() => h.http.get('/v1/jobs'));
  assert.deepEqual(statuses.slice(0, 2), [401, 401], 'the burst of 2 passes');
  assert.equal(statuses[statuses.length - 1], 429, String(statuses));
  const exchanges: { status: number; body: { error: { code: string } }; headers: Record<string, string> }[] =
    [];
  await untilLimited(async () => {
    const res = await h.http.post('/v1/auth/token').send({ apiKey: 'tsk_nope' });
    exchanges.push(res);
    return res;
  });
  const limited = exchanges[exchanges.length - 1]!;
  assert.equal(limited.status, 429);
  assert.equal(limited.body.error.code, 'rate_limited');
  assert.ok(Number(limited.headers['retry-after']) >= 1);
  // Admin credentials are not limited per address on ordinary routes, but are on the token route.
  await h.admin(h.http.get('/v1/tenants')).expect(200);
  const token = await untilLimited(() => h.admin(h.http.post('/v1/auth/token')).send({ apiKey: 'tsk_nope' }));
  assert.equal(token[token.length - 1], 429, String(token));
});
