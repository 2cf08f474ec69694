/**
 * Checkpoints in an S3-compatible bucket (AWS S3, MinIO, Ceph…). Each file of a checkpoint
 * directory is one object under `<prefix><dirKey>/`; `putDir` returns only after every PUT
 * succeeded, and the caller records the checkpoint after that, so a record never names a missing
 * object. Credentials come from the SDK's usual chain (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY…).
 */
import { createReadStream, createWriteStream, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { assertSafeKey, type CheckpointStore, type StorageConfig } from './checkpoint-store.js';

/** A job's scratch copies in the node's temporary folder, found again by their name. */
const scratchPrefix = (jobId: string) => `timeshare-ckpt-${jobId}-`;

export class S3CheckpointStore implements CheckpointStore {
  readonly kind = 's3' as const;
  private readonly client: S3Client;

  constructor(private readonly cfg: NonNullable<StorageConfig['s3']>) {
    this.client = new S3Client({
      region: cfg.region,
      ...(cfg.endpoint ? { endpoint: cfg.endpoint } : {}),
      forcePathStyle: cfg.forcePathStyle,
      // Checksums only where S3 requires them: the SDK's default (aws-chunked uploads with trailing
      // CRCs) is not understood by many S3-compatible servers, which would store the framing.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  private objectKey(key: string): string {
    assertSafeKey(key);
    return `${this.cfg.prefix}${key}`;
  }

  async scratchDir(jobId: string): Promise<string> {
    return fs.mkdtemp(path.join(os.tmpdir(), scratchPrefix(jobId)));
  }

  async discardScratch(jobId: string): Promise<void> {
    const prefix = scratchPrefix(jobId);
    for (const n of await fs.readdir(os.tmpdir()))
      if (n.startsWith(prefix)) await fs.rm(path.join(os.tmpdir(), n), { recursive: true, force: true });
  }

  async putDir(localDir: string, dirKey: string): Promise<void> {
    try {
      for (const f of await fs.readdir(localDir)) {
        const file = path.join(localDir, f);
        const { size } = await fs.stat(file);
        await this.client.send(
          new PutObjectCommand({
            Bucket: this.cfg.bucket,
            Key: this.objectKey(`${dirKey}/${f}`),
            Body: createReadStream(file),
            ContentLength: size,
          }),
        );
      }
    } finally {
      await fs.rm(localDir, { recursive: true, force: true });
    }
  }

  async deleteDir(dirKey: string): Promise<void> {
    // One object at a time: DeleteObjects needs a Content-MD5 many S3-compatible servers reject.
    const prefix = `${this.objectKey(dirKey)}/`;
    for (;;) {
      const listed = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.cfg.bucket, Prefix: prefix }),
      );
      const keys = (listed.Contents ?? []).map((o) => o.Key!);
      for (const Key of keys)
        await this.client.send(new DeleteObjectCommand({ Bucket: this.cfg.bucket, Key }));
      if (!listed.IsTruncated || keys.length === 0) return;
    }
  }

  async fetchDir(dirKey: string, scratch: string): Promise<string> {
    const prefix = `${this.objectKey(dirKey)}/`;
    const listed = await this.client.send(
      new ListObjectsV2Command({ Bucket: this.cfg.bucket, Prefix: prefix }),
    );
    await fs.mkdir(scratch, { recursive: true });
    for (const obj of listed.Contents ?? []) {
      const name = obj.Key!.slice(prefix.length);
      if (!name || name.includes('/')) continue;
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.cfg.bucket, Key: obj.Key! }));
      await pipeline(got.Body as Readable, createWriteStream(path.join(scratch, name)));
    }
    return scratch;
  }

  async size(key: string): Promise<number | null> {
    try {
      const head = await this.client.send(
        new HeadObjectCommand({ Bucket: this.cfg.bucket, Key: this.objectKey(key) }),
      );
      return head.ContentLength ?? null;
    } catch {
      return null;
    }
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Readable> {
    const got = await this.client.send(
      new GetObjectCommand({
        Bucket: this.cfg.bucket,
        Key: this.objectKey(key),
        ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
      }),
    );
    return got.Body as Readable;
  }
}
