/**
 * Saves a checkpoint so that a crash at any moment leaves either no checkpoint or a complete one:
 * the engine writes into a scratch directory, the store makes the whole directory durable (local:
 * fsync + rename; S3: every object PUT), and only then does the caller record it in the database.
 * The record points at `model.safetensors`; the sidecar and the optimizer state sit beside it.
 */
import { createHash } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import path from 'node:path';
import type { Engine } from '../native/index.js';
import type { SavedCheckpoint } from '../common/jobs/reports.js';
import { checkpointDirKey, checkpointModelKey, type CheckpointStore } from '../common/storage/index.js';

export async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

export async function writeCheckpoint(
  engine: Engine,
  store: CheckpointStore,
  jobId: string,
  step: number,
  meta: SavedCheckpoint['meta'],
): Promise<SavedCheckpoint> {
  const dirKey = checkpointDirKey(jobId, step);
  const scratch = await store.scratchDir(jobId, step);
  let sizeBytes: number;
  let sha256: string;
  try {
    await engine.saveCheckpoint(scratch, { withOptimizer: true });
    const model = path.join(scratch, 'model.safetensors');
    sizeBytes = (await fs.stat(model)).size;
    sha256 = await sha256File(model);
  } catch (err) {
    await fs.rm(scratch, { recursive: true, force: true });
    throw err;
  }
  await store.putDir(scratch, dirKey);
  return { step, sizeBytes, sha256, storageKey: checkpointModelKey(jobId, step), meta };
}
