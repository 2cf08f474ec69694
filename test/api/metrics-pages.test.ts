// A job's metrics come in pages that together hold every point once, in step-then-name order: a
// single page of at most 10,000 points used to end without saying so, and the CLI's table and the
// dashboard's curves stopped short of a long job's last steps.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { allJobMetrics } from '../../sdk/src/metrics.js';
import { createTimeshareClient } from '../../sdk/src/index.js';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';

let h: Harness;
let t: TestTenant;
let jobId: string;
let otherJobId: string;

const NAMES = ['loss', 'reward_mean', 'tokens'];
const STEPS = 40;

before(async () => {
  h = await startHarness();
  t = await h.createTenant('pager');
  const submit = async (name: string) =>
    (
      await t
        .as(h.http.post('/v1/jobs'))
        .send({ name, workflow: { task: { name: 'addition' } } })
        .expect(201)
    ).body.id as string;
  jobId = await submit('paged');
  otherJobId = await submit('other');
  await h.api.deps.db.pool.query(
    `INSERT INTO metrics (job_id, step, name, value)
     SELECT $1, s, n, s + 0.5 FROM generate_series(0, $2::int - 1) s CROSS JOIN unnest($3::text[]) n`,
    [jobId, STEPS, NAMES],
  );
});
after(() => h.close());

type Point = { step: number; name: string; value: number | string };
const key = (p: Point) => `${p.step}:${p.name}`;

async function pages(query: string): Promise<{ points: Point[]; pages: number }> {
  const points: Point[] = [];
  let cursor: string | null = null;
  let n = 0;
  do {
    const qs = `${query}${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`;
    const res = await t.as(h.http.get(`/v1/jobs/${jobId}/metrics?${qs}`)).expect(200);
    points.push(...(res.body.data as Point[]));
    cursor = res.body.nextCursor as string | null;
    n++;
  } while (cursor !== null && n < 1000);
  return { points, pages: n };
}

test('pages of `limit` hold every point once, in order, and the last says it is the last', async () => {
  const whole = await t.as(h.http.get(`/v1/jobs/${jobId}/metrics?limit=10000`)).expect(200);
  assert.equal(whole.body.data.length, STEPS * NAMES.length);
  assert.equal(whole.body.nextCursor, null);

  const paged = await pages('limit=7');
  assert.equal(paged.pages, Math.ceil((STEPS * NAMES.length) / 7));
  assert.deepEqual(paged.points.map(key), (whole.body.data as Point[]).map(key));

  // A page that ends exactly at the last point still names no next page.
  const exact = await pages(`limit=${NAMES.length * 10}`);
  assert.equal(exact.pages, STEPS / 10);

  // Filters hold across pages.
  const filtered = await pages('limit=6&name=loss&from_step=3&to_step=30');
  assert.deepEqual(
    filtered.points.map((p) => p.step),
    Array.from({ length: 28 }, (_, i) => i + 3),
  );
  assert.ok(filtered.points.every((p) => p.name === 'loss'));
});

test('the SDK reads every page: more points than one page holds', async () => {
  const client = createTimeshareClient({ baseUrl: h.api.url, token: t.token });
  await h.api.deps.db.pool.query(
    `INSERT INTO metrics (job_id, step, name, value)
     SELECT $1, s, 'many', 1 FROM generate_series(0, 10999) s`,
    [otherJobId],
  );
  const points = await allJobMetrics(client, otherJobId);
  assert.equal(points.length, 11_000);
  assert.equal(new Set(points.map((p) => p.step)).size, 11_000);
  assert.equal(points[points.length - 1]!.step, 10_999);
});

test("a cursor this API did not make for this job's metrics is a 400 naming `after`", async () => {
  const first = await t.as(h.http.get(`/v1/jobs/${jobId}/metrics?limit=2`)).expect(200);
  const cursor = first.body.nextCursor as string;
  const other = await t
    .as(h.http.get(`/v1/jobs/${otherJobId}/metrics?after=${encodeURIComponent(cursor)}`))
    .expect(400);
  assert.equal(other.body.error.param, 'after');
  const forged = (raw: string) => Buffer.from(raw).toString('base64url');
  for (const bad of [
    'not-a-cursor',
    forged(`x:loss|${jobId}`),
    forged(`99999999999:loss|${jobId}`),
    forged(`1:lo\0ss|${jobId}`),
  ]) {
    const res = await t
      .as(h.http.get(`/v1/jobs/${jobId}/metrics?after=${encodeURIComponent(bad)}`))
      .expect(400);
    assert.equal(res.body.error.code, 'invalid_request', bad);
    assert.equal(res.body.error.param, 'after', bad);
  }
});
