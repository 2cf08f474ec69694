/**
 * Deletes the files of checkpoints their jobs retired (common/jobs/checkpoint-retention.ts): at once
 * when a node's checkpoint retires older ones, and every `intervalMs` for what a crash or a failed
 * deletion left behind. One sweep at a time per process; API replicas skip each other's rows.
 */
import type pg from 'pg';
import type { Logger } from '../../common/logger.js';
import { sweepRetiredCheckpoints } from '../../common/jobs/checkpoint-retention.js';
import type { CheckpointStore } from '../../common/storage/index.js';

const BATCH = 100;

export class CheckpointSweeper {
  private running: Promise<void> | null = null;
  private again = false;
  private closed = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pool: pg.Pool,
    private readonly store: Pick<CheckpointStore, 'deleteDir'>,
    private readonly logger: Logger,
    intervalMs: number,
  ) {
    this.timer = setInterval(() => this.kick(), intervalMs);
    this.timer.unref();
    this.kick();
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

  /** Stops the timer and waits for a sweep under way. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.closed = true;
    await this.running;
  }
}
