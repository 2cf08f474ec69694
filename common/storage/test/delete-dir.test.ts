// A retired checkpoint's files go (common/jobs/checkpoint-retention.ts), and only its own, on
// either store; deleting what is already gone is not an error, so a sweep may run again.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import S3rver from 's3rver';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { LocalCheckpointStore } from '../local-store.js';
import { S3CheckpointStore } from '../s3-store.js';
import { checkpointDirKey, type CheckpointStore } from '../checkpoint-store.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'timeshare-store-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Saves steps 5, 50 and 500 of a job as a worker would. */
async function saveSteps(store: CheckpointStore) {
  for (const step of [5, 50, 500]) {
    const dir = await store.scratchDir('job-a', step);
    writeFileSync(path.join(dir, 'model.safetensors'), `model ${step}`);
    writeFileSync(path.join(dir, 'optimizer.bin'), `optimizer ${step}`);
    await store.putDir(dir, checkpointDirKey('job-a', step));
  }
}

test('local storage: deleteDir removes one checkpoint directory, and again is a no-op', async () => {
  const store = new LocalCheckpointStore(root);
  await saveSteps(store);
  await store.deleteDir(checkpointDirKey('job-a', 50));
  await store.deleteDir(checkpointDirKey('job-a', 50));
  assert.equal(await store.size(`${checkpointDirKey('job-a', 50)}/model.safetensors`), null);
  assert.equal(await store.size(`${checkpointDirKey('job-a', 5)}/model.safetensors`), 7);
  assert.equal(await store.size(`${checkpointDirKey('job-a', 500)}/model.safetensors`), 9);
});

test('S3 storage: deleteDir removes every object of one checkpoint and nothing else, and again is a no-op', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 's3rver-'));
  const s3 = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: dir,
    configureBuckets: [{ name: 'ckpt' }],
  });
  const { port } = await s3.run();
  const saved = { ...process.env };
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' });
  try {
    const endpoint = `http://127.0.0.1:${port}`;
    const cfg = { bucket: 'ckpt', endpoint, region: 'us-east-1', prefix: 't/', forcePathStyle: true };
    const store = new S3CheckpointStore(cfg);
    await saveSteps(store);
    await store.deleteDir(checkpointDirKey('job-a', 5));
    await store.deleteDir(checkpointDirKey('job-a', 5));
    const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true });
    const left = await client.send(new ListObjectsV2Command({ Bucket: 'ckpt', Prefix: 't/' }));
    assert.deepEqual((left.Contents ?? []).map((o) => o.Key).sort(), [
      't/jobs/job-a/step-00000050/model.safetensors',
      't/jobs/job-a/step-00000050/optimizer.bin',
      't/jobs/job-a/step-00000500/model.safetensors',
      't/jobs/job-a/step-00000500/optimizer.bin',
    ]);
    client.destroy();
  } finally {
    process.env = saved;
    await s3.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
