/**
 * Checkpoints in an S3-compatible bucket (s3rver, a real S3-protocol server on loopback): a job
 * writes its checkpoints there, is preempted and resumes by fetching its newest checkpoint back
 * from the bucket, and the API streams the objects to the tenant with matching sha256.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import {
  checkpointSteps,
  eventsOf,
  startCluster,
  steadyJob,
  waitFor,
  waitForStatus,
  type Cluster,
} from '../helpers/cluster.js';

let c: Cluster;
let s3: S3rver;
let s3Dir: string;
let endpoint: string;
const BUCKET = 'timeshare-ckpt';

before(async () => {
  s3Dir = mkdtempSync(path.join(os.tmpdir(), 's3rver-'));
  s3 = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: s3Dir,
    configureBuckets: [{ name: BUCKET }],
  });
  const { port } = await s3.run();
  endpoint = `http://127.0.0.1:${port}`;
  // The in-process API's S3 client reads credentials from this process's environment.
  process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
  c = await startCluster({
    env: {
      TIMESHARE_S3_BUCKET: BUCKET,
      TIMESHARE_S3_ENDPOINT: endpoint,
      TIMESHARE_S3_PREFIX: 'test/',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_REGION: 'us-east-1',
    },
  });
  await c.startWorker('s3-node', 1);
});
after(async () => {
  if (process.env.TEST_LOG_LEVEL) console.log(c.workers.get('s3-node')?.output());
  await c.close();
  await s3.close();
  rmSync(s3Dir, { recursive: true, force: true });
});

test(
  'checkpoints go to the bucket, a preempted job resumes from it, and the API streams them back',
  { timeout: Number(process.env.TEST_TIMEOUT ?? 180_000) },
  async () => {
    const t = await c.h.createTenant('s3-tenant');
    const id = (await t.as(c.h.http.post('/v1/jobs')).send(steadyJob('s3-job', 30)).expect(201)).body
      .id as string;
    await waitFor('a checkpoint', async () => (await checkpointSteps(c, t, id)).length > 0);
    await c.h.admin(c.h.http.post(`/v1/jobs/${id}/preempt`)).expect(202);
    const job = await waitForStatus(c, t, id, ['succeeded', 'failed']);
    assert.equal(job.status, 'succeeded', job.error ?? '');
    const runs = (await eventsOf(c, t, id)).filter((e) => e.type === 'job.running');
    assert.equal(runs.length, 2);
    assert.ok(
      (runs[1]!.data.resumedFromStep as number) > 0,
      'resumed from a checkpoint fetched from the bucket',
    );

    const client = new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    const listed = await client.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `test/jobs/${id}/` }),
    );
    const names = (listed.Contents ?? []).map((o) => o.Key!);
    assert.ok(names.some((k) => k.endsWith('/model.safetensors')));
    assert.ok(names.some((k) => k.endsWith('/optimizer.safetensors')));
    assert.ok(names.some((k) => k.endsWith('/checkpoint.json')));
    assert.equal(
      existsSync(path.join(c.h.config.TIMESHARE_STORAGE_ROOT, 'jobs', id)),
      false,
      'nothing on local disk',
    );

    const cks = (await t.as(c.h.http.get(`/v1/jobs/${id}/checkpoints`)).expect(200)).body.data;
    assert.ok(cks.length >= 2);
    for (const ck of cks) {
      const res = await t
        .as(c.h.http.get(`/v1/jobs/${id}/checkpoints/${ck.id}/content`))
        .buffer(true)
        .parse((r, cb) => {
          const chunks: Buffer[] = [];
          r.on('data', (d: Buffer) => chunks.push(d));
          r.on('end', () => cb(null, Buffer.concat(chunks)));
        })
        .expect(200);
      assert.equal(createHash('sha256').update(res.body).digest('hex'), ck.sha256);
    }
    const ranged = await t
      .as(c.h.http.get(`/v1/jobs/${id}/checkpoints/${cks[0].id}/content`))
      .set('Range', 'bytes=0-7')
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (d: Buffer) => chunks.push(d));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      })
      .expect(206);
    assert.equal(ranged.body.length, 8);
  },
);
