import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';

let h: Harness;
let t: TestTenant;
let jobId: string;
let ck: { id: string; sha256: string };
const bytes = randomBytes(100_000);

before(async () => {
  h = await startHarness();
  t = await h.createTenant('downloader');
  jobId = (
    await t
      .as(h.http.post('/v1/jobs'))
      .send({ name: 'ck', workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body.id;
  // Stands in for a worker: file first, then the record.
  const key = `jobs/${jobId}/step-20.safetensors`;
  const file = path.join(h.config.TIMESHARE_STORAGE_ROOT, key);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, bytes);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const row = await h.api.deps.db.prisma.checkpoint.create({
    data: {
      jobId,
      step: 20,
      sizeBytes: BigInt(bytes.length),
      sha256,
      storageKey: key,
      meta: { weightVersion: 20 },
    },
  });
  ck = { id: row.id, sha256 };
});
after(() => h.close());

// supertest's parser hook receives the raw Node response despite its typing.
const binary = (res: NodeJS.ReadableStream, cb: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
};

test('lists checkpoints and streams one whole, with Content-Length and its sha256', async () => {
  const list = await t.as(h.http.get(`/v1/jobs/${jobId}/checkpoints`)).expect(200);
  assert.deepEqual(
    list.body.data.map((c: { step: number; sizeBytes: number; sha256: string }) => [
      c.step,
      c.sizeBytes,
      c.sha256,
    ]),
    [[20, bytes.length, ck.sha256]],
  );
  const res = await t
    .as(h.http.get(`/v1/jobs/${jobId}/checkpoints/${ck.id}/content`))
    .buffer(true)
    .parse(binary as never)
    .expect(200);
  assert.equal(res.headers['content-length'], String(bytes.length));
  assert.equal(res.headers['x-checkpoint-sha256'], ck.sha256);
  assert.equal(res.headers['accept-ranges'], 'bytes');
  assert.equal(createHash('sha256').update(res.body).digest('hex'), ck.sha256);
});

test('serves byte ranges (206) and refuses ranges outside the file (416)', async () => {
  const part = await t
    .as(h.http.get(`/v1/jobs/${jobId}/checkpoints/${ck.id}/content`))
    .set('Range', 'bytes=1000-1999')
    .buffer(true)
    .parse(binary as never)
    .expect(206);
  assert.equal(part.headers['content-range'], `bytes 1000-1999/${bytes.length}`);
  assert.equal(part.headers['content-length'], '1000');
  assert.ok(part.body.equals(bytes.subarray(1000, 2000)));
  const tail = await t
    .as(h.http.get(`/v1/jobs/${jobId}/checkpoints/${ck.id}/content`))
    .set('Range', 'bytes=-10')
    .buffer(true)
    .parse(binary as never)
    .expect(206);
  assert.ok(tail.body.equals(bytes.subarray(bytes.length - 10)));
  const bad = await t
    .as(h.http.get(`/v1/jobs/${jobId}/checkpoints/${ck.id}/content`))
    .set('Range', `bytes=${bytes.length}-`)
    .expect(416);
  assert.equal(bad.body.error.code, 'range_not_satisfiable');
  assert.equal(bad.headers['content-range'], `bytes */${bytes.length}`);
});

test('an invalid range-spec is ignored (RFC 9110): inverted or malformed, the whole file (200)', async () => {
  for (const range of ['bytes=10-5', `bytes=${bytes.length + 10}-3`, 'bytes=abc']) {
    const res = await t
      .as(h.http.get(`/v1/jobs/${jobId}/checkpoints/${ck.id}/content`))
      .set('Range', range)
      .buffer(true)
      .parse(binary as never)
      .expect(200);
    assert.equal(res.headers['content-range'], undefined, range);
    assert.equal(res.headers['content-length'], String(bytes.length), range);
    assert.ok(res.body.equals(bytes), range);
  }
});

test('a record whose file is missing is a 404, and keys cannot escape the storage root', async () => {
  const row = await h.api.deps.db.prisma.checkpoint.create({
    data: { jobId, step: 40, sizeBytes: 1n, sha256: 'x', storageKey: '../../etc/passwd' },
  });
  const res = await t.as(h.http.get(`/v1/jobs/${jobId}/checkpoints/${row.id}/content`)).expect(404);
  assert.equal(res.body.error.code, 'not_found');
});

test('If-Range: the current ETag keeps the range (206); any other validator gets the whole file (200)', async () => {
  const url = `/v1/jobs/${jobId}/checkpoints/${ck.id}/content`;
  const same = await t
    .as(h.http.get(url))
    .set('Range', 'bytes=0-9')
    .set('If-Range', `"${ck.sha256}"`)
    .buffer(true)
    .parse(binary as never)
    .expect(206);
  assert.ok(same.body.equals(bytes.subarray(0, 10)));
  for (const stale of ['"0000"', `W/"${ck.sha256}"`, 'Wed, 21 Oct 2015 07:28:00 GMT']) {
    const whole = await t
      .as(h.http.get(url))
      .set('Range', 'bytes=0-9')
      .set('If-Range', stale)
      .buffer(true)
      .parse(binary as never)
      .expect(200);
    assert.equal(whole.headers['content-length'], String(bytes.length), stale);
    assert.ok(whole.body.equals(bytes), stale);
  }
});
