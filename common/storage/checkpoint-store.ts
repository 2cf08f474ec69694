/**
 * Where checkpoint files live: a local directory by default, an S3-compatible bucket when
 * configured. Workers put a whole checkpoint directory (model, optimizer, sidecar) and only then
 * record it, so a record always names complete files; the API streams them back; a resuming job
 * fetches the directory to local disk for the engine.
 */
import type { Readable } from 'node:stream';

export interface CheckpointStore {
  readonly kind: 'local' | 's3';
  /**
   * An empty local directory to save a job's checkpoint of `step` into before `putDir` (same
   * filesystem for local).
   */
  scratchDir(jobId: string, step: number): Promise<string>;
  /**
   * Removes the scratch directories a run of this job left behind: a job process killed while
   * saving (a node lost, a daemon gone) never consumed its scratch copy, and nothing else would
   * ever delete it (checkpoint-sized, on the store's disk for local storage). Called when a run
   * starts, when no other process of the job is writing (supervision.ts).
   */
  discardScratch(jobId: string): Promise<void>;
  /** Makes `localDir`'s files durable under `dirKey`, replacing what was there; consumes `localDir`. */
  putDir(localDir: string, dirKey: string): Promise<void>;
  /**
   * Deletes the files under `dirKey` (a checkpoint retired by its job's keepCheckpoints); nothing
   * there is not an error, so a sweep that stopped half-way can run again.
   */
  deleteDir(dirKey: string): Promise<void>;
  /** A local directory holding the files under `dirKey` (downloaded into `scratch` if remote). */
  fetchDir(dirKey: string, scratch: string): Promise<string>;
  size(key: string): Promise<number | null>;
  read(key: string, range?: { start: number; end: number }): Promise<Readable>;
}

export interface StorageConfig {
  root: string;
  s3?: { bucket: string; endpoint?: string; region: string; prefix: string; forcePathStyle: boolean };
}

/** Storage keys are relative, slash-separated, and never climb out of their root. */
export function assertSafeKey(key: string): void {
  if (!key || key.startsWith('/') || key.split('/').some((p) => p === '..' || p === '')) {
    throw new Error(`unsafe storage key: ${key}`);
  }
}

/**
 * The one rule for where a job's checkpoint lives, local or S3 alike. The worker writes there and
 * the control plane records this key itself: a node never chooses where a record points.
 */
export const checkpointDirKey = (jobId: string, step: number) =>
  `${jobDirKey(jobId)}/step-${String(step).padStart(8, '0')}`;

/** Where all of a job's checkpoints live. */
export const jobDirKey = (jobId: string) => `jobs/${jobId}`;

/** The file a checkpoint record names; the sidecar and the optimizer state sit beside it. */
export const checkpointModelKey = (jobId: string, step: number) =>
  `${checkpointDirKey(jobId, step)}/model.safetensors`;
