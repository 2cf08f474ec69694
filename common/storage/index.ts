import type { CheckpointStore, StorageConfig } from './checkpoint-store.js';
import { LocalCheckpointStore } from './local-store.js';
import { S3CheckpointStore } from './s3-store.js';

export type { CheckpointStore, StorageConfig } from './checkpoint-store.js';
export { checkpointDirKey, checkpointModelKey } from './checkpoint-store.js';

export function openCheckpointStore(cfg: StorageConfig): CheckpointStore {
  return cfg.s3 ? new S3CheckpointStore(cfg.s3) : new LocalCheckpointStore(cfg.root);
}

/** The storage settings every process reads the same way (from its environment or its config). */
export function storageConfigFromEnv(env: Readonly<Record<string, unknown>>, root: string): StorageConfig {
  const str = (k: string) => (typeof env[k] === 'string' && env[k] !== '' ? (env[k] as string) : undefined);
  const bucket = str('TIMESHARE_S3_BUCKET');
  if (!bucket) return { root };
  const endpoint = str('TIMESHARE_S3_ENDPOINT');
  const pathStyle = str('TIMESHARE_S3_FORCE_PATH_STYLE');
  return {
    root,
    s3: {
      bucket,
      endpoint,
      region: str('TIMESHARE_S3_REGION') ?? 'us-east-1',
      prefix: str('TIMESHARE_S3_PREFIX') ?? '',
      // S3-compatible servers (MinIO, Ceph) address buckets by path, not by host name.
      forcePathStyle: pathStyle ? pathStyle === 'true' : endpoint !== undefined,
    },
  };
}
