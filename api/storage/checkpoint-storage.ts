/**
 * Where checkpoint files live. Workers write them (temporary file, fsync, rename, then the database
 * record); the API only reads. Local directory by default; an S3-compatible backend plugs in behind
 * the same interface later. Storage keys come from the database, but are still confined to the
 * root so a bad record can never read outside it.
 */
import { createReadStream, promises as fs } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';

export interface CheckpointStorage {
  size(key: string): Promise<number | null>;
  read(key: string, range?: { start: number; end: number }): Readable;
}

export class LocalCheckpointStorage implements CheckpointStorage {
  readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  resolve(key: string): string {
    const full = path.resolve(this.root, key);
    if (!full.startsWith(this.root + path.sep)) throw new Error(`storage key escapes the root: ${key}`);
    return full;
  }

  async size(key: string): Promise<number | null> {
    try {
      const st = await fs.stat(this.resolve(key));
      return st.isFile() ? st.size : null;
    } catch {
      return null;
    }
  }

  read(key: string, range?: { start: number; end: number }): Readable {
    return createReadStream(this.resolve(key), range ? { start: range.start, end: range.end } : {});
  }
}
