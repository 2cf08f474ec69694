// Dedicated connections for BLPOP: a blocked connection serves nobody else, so each waiting
// acquire borrows one. Idle ones are kept so that a waiter's wake-up costs no connect.
import type { Redis } from 'ioredis';

export class BlockingPool {
  private readonly idle: Redis[] = [];
  private readonly all = new Set<Redis>();
  private closed = false;

  constructor(
    private readonly source: Redis,
    private readonly maxIdle: number,
  ) {}

  take(): Redis {
    if (this.closed) throw new Error('device-lock service is closed');
    const reused = this.idle.pop();
    if (reused) return reused;
    // No command timeout here: BLPOP blocks for a whole heartbeat interval by design.
    const conn = this.source.duplicate({ commandTimeout: undefined });
    conn.on('error', () => {}); // surfaced by the pending BLPOP; avoid unhandled 'error' events
    this.all.add(conn);
    return conn;
  }

  give(conn: Redis, healthy: boolean): void {
    if (healthy && !this.closed && this.idle.length < this.maxIdle) {
      this.idle.push(conn);
      return;
    }
    this.all.delete(conn);
    conn.disconnect();
  }

  close(): void {
    this.closed = true;
    for (const conn of this.all) conn.disconnect();
    this.all.clear();
    this.idle.length = 0;
  }
}
