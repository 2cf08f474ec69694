/**
 * Checkpoints in a local directory. `putDir` is atomic: files and directory are fsynced, the
 * directory is renamed into place (replacing an older copy of the same step), then the parent is
 * fsynced; a crash at any point leaves either the old directory or the new one, never half of one.
 */
import { createReadStream, promises as fs } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { assertSafeKey, checkpointDirKey, jobDirKey, type CheckpointStore } from './checkpoint-store.js';

/** Scratch directories sit beside the checkpoints they become, under this prefix. */
const SCRATCH_PREFIX = '.tmp-';

async function fsyncPath(p: string): Promise<void> {
  const fh = await fs.open(p, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export class LocalCheckpointStore implements CheckpointStore {
  readonly kind = 'local' as const;
  readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  resolve(key: string): string {
    assertSafeKey(key);
    const full = path.resolve(this.root, key);
    if (!full.startsWith(this.root + path.sep)) throw new Error(`storage key escapes the root: ${key}`);
    return full;
  }

  async scratchDir(jobId: string, step: number): Promise<string> {
    const final = this.resolve(checkpointDirKey(jobId, step));
    await fs.mkdir(path.dirname(final), { recursive: true });
    const tmp = path.join(
      path.dirname(final),
      `${SCRATCH_PREFIX}${path.basename(final)}-${randomBytes(4).toString('hex')}`,
    );
    await fs.mkdir(tmp);
    return tmp;
  }

  async discardScratch(jobId: string): Promise<void> {
    const dir = this.resolve(jobDirKey(jobId));
    let names: string[];
    try {
      names = await fs.readdir(dir);
    } catch {
      return; // no checkpoint written yet
    }
    for (const n of names)
      if (n.startsWith(SCRATCH_PREFIX)) await fs.rm(path.join(dir, n), { recursive: true, force: true });
  }

  async putDir(localDir: string, dirKey: string): Promise<void> {
    const final = this.resolve(dirKey);
    try {
      for (const f of await fs.readdir(localDir)) await fsyncPath(path.join(localDir, f));
      await fsyncPath(localDir);
      await fs.rm(final, { recursive: true, force: true });
      await fs.rename(localDir, final);
      await fsyncPath(path.dirname(final));
    } catch (err) {
      await fs.rm(localDir, { recursive: true, force: true });
      throw err;
    }
  }

  async deleteDir(dirKey: string): Promise<void> {
    await fs.rm(this.resolve(dirKey), { recursive: true, force: true });
  }

  async fetchDir(dirKey: string): Promise<string> {
    return this.resolve(dirKey);
  }

  async size(key: string): Promise<number | null> {
    try {
      const st = await fs.stat(this.resolve(key));
      return st.isFile() ? st.size : null;
    } catch {
      return null;
    }
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Readable> {
    return createReadStream(this.resolve(key), range ? { start: range.start, end: range.end } : {});
  }
}
