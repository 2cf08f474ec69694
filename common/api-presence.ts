/**
 * An API process's presence: whether the control plane can take heartbeats, as the liveness sweep
 * sees it (scheduler/liveness.ts). A heartbeat is a write to PostgreSQL through the API; with the
 * API down (every replica stopped, crashed, or cut off from the database) and PostgreSQL up, the
 * fleet's heartbeats fail while the sweep's statements succeed, and every live node was found lost
 * a node timeout later, each job requeued `node_lost` with an attempt counted: three such outages
 * failed every long job for good.
 *
 * Each API process upserts its row of `api_presence` every period (a tenth of the node timeout, at
 * most a second) with the database's own now(), so the API's clock does not matter. Written through
 * the pool that serves heartbeats: an instance whose database calls fail writes nothing and is not
 * present. `present_since` is the start of its unbroken run of writes: a write that follows its last
 * by more than `PRESENCE_STALE_PERIODS` periods (a failed write, a paused process, a restart)
 * starts a new run. The sweep counts an instance present while its last write is younger than that
 * many periods (3 tenths of the node timeout, below the timeout itself), and counts a node's silence
 * only from the start of the run of one present now. On a clean stop the row is deleted (the process
 * takes no heartbeat any more); rows of processes that died are deleted by the next start of any API
 * process, and every `PRUNE_EVERY` periods, once a day old.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from './logger.js';

/** An instance is present while its last write is younger than this many of its periods. */
export const PRESENCE_STALE_PERIODS = 3;
const PRUNE_EVERY = 3600;

/** How often an API process writes its presence: a tenth of the node timeout, 100 ms to 1 s. */
export const presencePeriodMs = (nodeTimeoutMs: number) =>
  Math.min(1000, Math.max(100, Math.floor(nodeTimeoutMs / 10)));

export class ApiPresence {
  readonly instanceId = randomUUID();
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<boolean> | null = null;
  private beats = 0;

  constructor(
    private readonly pool: Pick<pg.Pool, 'query'>,
    private readonly logger: Logger,
    readonly periodMs: number,
  ) {}

  /** Writes now, then every period until `close`. */
  start(): void {
    if (this.timer) return;
    void this.tick();
    this.timer = setInterval(() => void this.tick(), this.periodMs);
    this.timer.unref();
  }

  private tick(): Promise<boolean> {
    // One write at a time: a write slower than the period makes the next one wait its turn.
    this.inFlight ??= this.beat().finally(() => (this.inFlight = null));
    return this.inFlight;
  }

  /** One write of this instance's presence; false (logged) when the database refused it. */
  async beat(): Promise<boolean> {
    try {
      await this.pool.query(
        `INSERT INTO api_presence (instance_id, present_since, last_seen_at, period_ms)
         VALUES ($1, now(), now(), $2)
         ON CONFLICT (instance_id) DO UPDATE SET
           present_since = CASE
             WHEN api_presence.last_seen_at >= now() - make_interval(secs => $3 * api_presence.period_ms / 1000.0)
             THEN api_presence.present_since ELSE now() END,
           last_seen_at = now(), period_ms = $2`,
        [this.instanceId, this.periodMs, PRESENCE_STALE_PERIODS],
      );
      if (this.beats++ % PRUNE_EVERY === 0)
        await this.pool.query(`DELETE FROM api_presence WHERE last_seen_at < now() - interval '1 day'`);
      return true;
    } catch (err) {
      this.logger.warn({ err }, 'api presence: write failed');
      return false;
    }
  }

  /** Stops writing and deletes this instance's row: it takes no heartbeat any more. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    // Bounded: a stop must not hang on a database that does not answer (the row goes stale anyway).
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, 2000)));
    await Promise.race([
      (async () => {
        await this.inFlight;
        await this.pool.query(`DELETE FROM api_presence WHERE instance_id = $1`, [this.instanceId]);
      })().catch(() => undefined),
      bound,
    ]);
    clearTimeout(timer);
  }
}
