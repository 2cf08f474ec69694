/**
 * Writes a checkpoint so that a crash at any moment leaves either no checkpoint or a complete one:
 * the engine writes into a temporary directory beside the final one, every file and the directory
 * are fsynced, the directory is renamed into place, the parent is fsynced, and only then does the
 * caller record it in the database. The record points at `model.safetensors`; its sidecar and the
 * optimizer state sit beside it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import path from 'node:path';
import type { Engine } from '../native/index.js';
import type { CheckpointReport } from '../common/jobs/reports.js';

export const checkpointDirKey = (jobId: string, step: number) =>
  `jobs/${jobId}/step-${String(step).padStart(8, '0')}`;

async function fsyncPath(p: string): Promise<void> {
  const fh = await fs.open(p, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

export async function writeCheckpoint(
  engine: Engine,
  storageRoot: string,
  jobId: string,
  step: number,
  meta: Record<string, unknown>,
): Promise<CheckpointReport> {
  const dirKey = checkpointDirKey(jobId, step);
  const finalDir = path.join(storageRoot, dirKey);
  const parent = path.dirname(finalDir);
  await fs.mkdir(parent, { recursive: true });
  const tmp = path.join(parent, `.tmp-${path.basename(finalDir)}-${randomBytes(4).toString('hex')}`);
  await fs.mkdir(tmp);
  try {
    await engine.saveCheckpoint(tmp, { withOptimizer: true });
    for (const f of await fs.readdir(tmp)) await fsyncPath(path.join(tmp, f));
    await fsyncPath(tmp);
    // A resumed run that reaches a step again replaces the lost run's directory.
    await fs.rm(finalDir, { recursive: true, force: true });
    await fs.rename(tmp, finalDir);
    await fsyncPath(parent);
  } catch (err) {
    await fs.rm(tmp, { recursive: true, force: true });
    throw err;
  }
  const model = path.join(finalDir, 'model.safetensors');
  const { size } = await fs.stat(model);
  return {
    step,
    sizeBytes: size,
    sha256: await sha256File(model),
    storageKey: `${dirKey}/model.safetensors`,
    meta,
  };
}
