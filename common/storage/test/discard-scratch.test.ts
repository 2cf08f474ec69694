// A job process killed while saving a checkpoint leaves its scratch copy; the job's next run
// removes it (job-runner.ts), and only its own job's, never a checkpoint directory.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { LocalCheckpointStore } from '../local-store.js';
import { S3CheckpointStore } from '../s3-store.js';
import { checkpointDirKey } from '../checkpoint-store.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'timeshare-store-'));
after(() => rmSync(root, { recursive: true, force: true }));

test('local storage: a run removes its job’s leftover scratch directories and nothing else', async () => {
  const store = new LocalCheckpointStore(root);
  // Step 5 committed; step 10 cut off mid-save; another job's save in progress.
  const committed = await store.scratchDir('job-a', 5);
  writeFileSync(path.join(committed, 'model.safetensors'), 'x');
  await store.putDir(committed, checkpointDirKey('job-a', 5));
  const cut = await store.scratchDir('job-a', 10);
  writeFileSync(path.join(cut, 'model.safetensors'), 'half');
  const other = await store.scratchDir('job-b', 10);

  await store.discardScratch('job-a');
  assert.deepEqual(readdirSync(path.join(root, 'jobs', 'job-a')), ['step-00000005']);
  assert.ok(existsSync(other), "another job's scratch stays");
  await store.discardScratch('never-saved'); // no directory yet: nothing to do
});

test('S3 storage: the scratch copies in the node’s temporary folder are found by job', async () => {
  const store = new S3CheckpointStore({ bucket: 'b', region: 'us-east-1', prefix: '', forcePathStyle: true });
  const mine = await store.scratchDir('job-c');
  const other = await store.scratchDir('job-d');
  mkdirSync(path.join(mine, 'nested'));
  await store.discardScratch('job-c');
  assert.equal(existsSync(mine), false);
  assert.ok(existsSync(other));
  rmSync(other, { recursive: true, force: true });
});
