/**
 * `timeshare checkpoints download` resumes a leftover `<out>.part` only when its sidecar says it
 * holds the checkpoint asked for. It resumed any part: one of another checkpoint failed the sha256
 * check at the end (checksum_mismatch), however often the download was tried again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { useCliFixture } from './cli-fixture.js';
import { runCli } from './run-cli.js';

const cli = useCliFixture('checkpoint-download', {
  tenant: 'downloader',
  env: ({ h, t }) => ({ TIMESHARE_API_URL: h.api.url, TIMESHARE_API_KEY: t.apiKey }),
});

interface Stored {
  id: string;
  sha256: string;
  bytes: Buffer;
}
let jobId: string;
const checkpoints: Stored[] = [];

// Made by the first test (a root `before` here would run ahead of the fixture's).
let made: Promise<void> | undefined;
const ready = () => (made ??= storeCheckpoints());

/** Two checkpoints of one job, as a worker leaves them: the file, then the record. */
async function storeCheckpoints(): Promise<void> {
  jobId = (
    await cli.t
      .as(cli.h.http.post('/v1/jobs'))
      .send({ name: 'ck', workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body.id;
  for (const step of [10, 20]) {
    const bytes = randomBytes(64_000);
    const key = `jobs/${jobId}/step-${step}.safetensors`;
    const file = path.join(cli.h.config.TIMESHARE_STORAGE_ROOT, key);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, bytes);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const row = await cli.h.api.deps.db.prisma.checkpoint.create({
      data: { jobId, step, sizeBytes: BigInt(bytes.length), sha256, storageKey: key },
    });
    checkpoints.push({ id: row.id, sha256, bytes });
  }
}

const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  );
const download = (ck: Stored, out: string) =>
  runCli(['checkpoints', 'download', jobId, ck.id, '-o', out], cli.env);
const sidecar = (ck: Stored) => JSON.stringify({ job: jobId, checkpoint: ck.id, sha256: ck.sha256 });

async function downloaded(out: string, ck: Stored): Promise<void> {
  assert.ok((await readFile(out)).equals(ck.bytes));
  assert.ok(!(await exists(`${out}.part`)), 'no part left');
  assert.ok(!(await exists(`${out}.part.json`)), 'no sidecar left');
}

test("another checkpoint's part is not resumed: the download starts over and is verified", async () => {
  await ready();
  const [older, newer] = checkpoints as [Stored, Stored];
  const out = path.join(cli.home, 'other.safetensors');
  const half = older.bytes.length / 2;
  await writeFile(`${out}.part`, older.bytes.subarray(0, half));
  await writeFile(`${out}.part.json`, sidecar(older));
  const r = await download(newer, out);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stderr,
    new RegExp(`${out}\\.part is not a download of checkpoint ${newer.id}: starting over`),
  );
  assert.doesNotMatch(r.stderr, /resumed from byte/);
  assert.match(r.stdout, new RegExp(`sha256 ${newer.sha256} verified`));
  await downloaded(out, newer);
});

test('a part of the same checkpoint is resumed from its length, and its sidecar removed after', async () => {
  await ready();
  const ck = checkpoints[1]!;
  const out = path.join(cli.home, 'same.safetensors');
  const part = Math.floor(ck.bytes.length / 3);
  await writeFile(`${out}.part`, ck.bytes.subarray(0, part));
  await writeFile(`${out}.part.json`, sidecar(ck));
  const r = await download(ck, out);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`resumed from byte ${part}`));
  await downloaded(out, ck);
});

test('a part without a sidecar vouches for nothing: started over; a fresh download leaves none', async () => {
  await ready();
  const ck = checkpoints[0]!;
  const out = path.join(cli.home, 'orphan.safetensors');
  await writeFile(`${out}.part`, Buffer.alloc(1000, 7));
  const r = await download(ck, out);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /is not a download of checkpoint .*: starting over/);
  await downloaded(out, ck);

  const fresh = path.join(cli.home, 'fresh.safetensors');
  const f = await runCli(['--json', 'checkpoints', 'download', jobId, ck.id, '-o', fresh], cli.env);
  assert.equal(f.code, 0, f.stderr);
  assert.equal(JSON.parse(f.stdout).verified, true);
  await downloaded(fresh, ck);
});
