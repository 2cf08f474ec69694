/**
 * Retires a job's older checkpoints when a node records a newer one, and deletes the files of those
 * retired (common/jobs/checkpoint-retention.ts): at once, and every `intervalMs` for what a crash or
 * a failed deletion left behind. One sweep at a time per process; API replicas skip each other's
 * rows. A checkpoint retention skipped because an admission was naming it is tried again
 * `retryMs` later (and after that on each sweep, until it is retired or named): an admission that
 * rolled back names nothing, and a job that recorded its last checkpoint has no later record to
 * retire it. A crash forgets the retry: the job's next record, if any, does it.
 */
import type pg from 'pg';
import type { Logger } from '../../common/logger.js';
import { retireCheckpoints, sweepRetiredCheckpoints } from '../../common/jobs/checkpoint-retention.js';
import type { CheckpointStore } from '../../common/storage/index.js';

const BATCH = 100;

export class CheckpointSweeper {
  private running: Promise<void> | null = null;
  private again = false;
  private closed = false;
  private readonly timer: NodeJS.Timeout;
  /** Jobs whose retention skipped a held checkpoint: job → its keepCheckpoints. */
  private readonly held = new Map<string, number>();
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly pool: pg.Pool,
    private readonly store: Pick<CheckpointStore, 'deleteDir'>,
    private readonly logger: Logger,
    intervalMs: number,
    private readonly retryMs = 2_000,
  ) {
    this.timer = setInterval(() => {
      this.retryHeld();
      void this.kick();
    }, intervalMs);
    this.timer.unref();
    void this.kick();
  }

  /**
   * Retires the job's checkpoints beyond its newest `keep` and sweeps their files; returns how many
   * it retired. A failure is logged and left to the job's next record.
   */
  async retire(jobId: string, keep: number): Promise<number> {
    if (this.closed) return 0;
    try {
      const { retired, skipped } = await retireCheckpoints(this.pool, jobId, keep);
      if (skipped) this.holdFor(jobId, keep);
      else this.held.delete(jobId);
      if (retired) void this.kick();
      return retired;
    } catch (err) {
      this.logger.warn({ err, jobId }, 'older checkpoints not retired; the next record retries');
      return 0;
    }
  }

  private holdFor(jobId: string, keep: number): void {
    this.held.set(jobId, keep);
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.retryHeld();
    }, this.retryMs);
    this.retryTimer.unref();
  }

  private retryHeld(): void {
    for (const [jobId, keep] of [...this.held]) {
      this.held.delete(jobId);
      void this.retire(jobId, keep);
    }
  }

  /** Sweeps soon; a kick during a sweep runs one more after it. Resolves when that one ends. */
  kick(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.sweep().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        void this.kick();
      }
    });
    return this.running;
  }

  private async sweep(): Promise<void> {
    try {
      let n: number;
      do n = await sweepRetiredCheckpoints(this.pool, this.store, BATCH);
      while (n === BATCH);
    } catch (err) {
      this.logger.warn({ err }, 'retired checkpoint files not deleted yet; the next sweep retries');
    }
  }

  /** Stops the timers and waits for a sweep under way. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.closed = true;
    await this.running;
  }
}
