/**
 * Every report a node makes about its jobs goes through a small outbox on local disk, in order:
 * each is written (renamed into place; checkpoint records and outcomes fsynced first, as they
 * must not be lost) before it is sent, and deleted only once the control plane answered. One queue
 * keeps the order the API needs (start, reports, checkpoints, outcome) and a report never waits
 * behind another's retries in memory. While the API is unreachable they wait, in order,
 * retried with backoff for as long as it takes; a daemon that stops with reports still pending
 * leaves them on disk and the next daemon sends them before it registers (registering requeues the
 * node's jobs, after which their reports would be refused). An answer that is final (a 4xx but a
 * 429 or a protocol version the control plane does not accept yet: it refused the report) removes
 * the report too: sending it again cannot change that.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../common/logger.js';
import {
  NODE_PROTOCOL_VERSION,
  type CheckpointReport,
  type JobFinish,
  type JobReport,
  type JobStart,
} from '../common/node-protocol/index.js';

/**
 * Each body names the run it is about (`queueSeq`), fixed when it is put, so a resend still does;
 * `protocol` is the node protocol version it was written in (common/node-protocol/version.ts), set
 * by `put` (absent in a record of a daemon before versions: 1), so a record that waits through a
 * daemon upgrade is sent as what it is.
 */
export type OutboxReport = { nodeId: string; jobId: string; protocol?: number } & (
  | { kind: 'start'; body: JobStart }
  | { kind: 'report'; body: JobReport }
  | { kind: 'checkpoint'; body: CheckpointReport }
  | { kind: 'finish'; body: JobFinish }
);

export interface OutboxOptions {
  dir: string;
  send: (r: OutboxReport) => Promise<unknown>;
  /** Whether a failed send is the control plane's final answer (drop it) rather than a transient failure. */
  isFinal: (err: unknown) => boolean;
  logger: Logger;
  /** Told of each report dropped because the control plane refused it for good. */
  onDropped?: (r: OutboxReport, err: unknown) => void;
  /** Retry delays, ms: doubling from the first up to the last. */
  backoffMs?: { first: number; max: number };
}

interface Pending {
  file: string;
  report: OutboxReport;
}

export class ReportOutbox {
  private readonly queue: Pending[] = [];
  private seq = 0;
  private flushing: Promise<void> | null = null;
  private closed = false;
  private wake: (() => void) | null = null;
  /** `jobId:queueSeq` → finish records of that run pending here (loaded from disk or put since). */
  private readonly finishes = new Map<string, number>();

  constructor(private readonly opts: OutboxOptions) {}

  /** Loads what an earlier daemon left, oldest first. */
  async open(): Promise<number> {
    await fs.mkdir(this.opts.dir, { recursive: true });
    const all = await fs.readdir(this.opts.dir);
    // A report cut short by a crash was never acknowledged by its rename: it does not exist.
    for (const n of all.filter((n) => n.endsWith('.tmp')))
      await fs.rm(path.join(this.opts.dir, n), { force: true });
    const names = all.filter((n) => n.endsWith('.json')).sort();
    for (const name of names) {
      const file = path.join(this.opts.dir, name);
      let report: OutboxReport;
      try {
        report = JSON.parse(await fs.readFile(file, 'utf8')) as OutboxReport;
      } catch {
        // Unreadable (a disk that lost the data despite the fsync): nothing to send.
        await fs.rm(file, { force: true });
        continue;
      }
      this.enqueue({ file, report: { ...report, protocol: report.protocol ?? 1 } });
    }
    this.kick();
    return names.length;
  }

  get pending(): number {
    return this.queue.length;
  }

  /** Durable once this resolves; sent as soon as the control plane can take it. */
  async put(written: OutboxReport): Promise<void> {
    const report = { ...written, protocol: written.protocol ?? NODE_PROTOCOL_VERSION };
    // Names sort in the order reports were put, across daemon restarts too.
    const name = `${Date.now().toString().padStart(15, '0')}-${String(this.seq++).padStart(9, '0')}.json`;
    const file = path.join(this.opts.dir, name);
    const tmp = `${file}.tmp`;
    const fh = await fs.open(tmp, 'w');
    try {
      await fh.writeFile(JSON.stringify(report));
      // Metrics and profiles may be lost with the machine; checkpoint records and outcomes may not.
      if (report.kind !== 'report') await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.rename(tmp, file);
    this.enqueue({ file, report });
    this.kick();
  }

  /**
   * Whether the outcome of run `queueSeq` of the job waits here, undelivered: that run has ended
   * on this node, whatever the control plane's assignment still says (job-supervisor.ts must not
   * start it again). Counts records an earlier daemon left too, once `open` has loaded them.
   */
  holdsFinish(jobId: string, queueSeq: number): boolean {
    return this.finishes.has(`${jobId}:${queueSeq}`);
  }

  private enqueue(p: Pending): void {
    this.queue.push(p);
    if (p.report.kind !== 'finish') return;
    const key = `${p.report.jobId}:${p.report.body.queueSeq}`;
    this.finishes.set(key, (this.finishes.get(key) ?? 0) + 1);
  }

  private dequeue(): void {
    const p = this.queue.shift();
    if (p?.report.kind !== 'finish') return;
    const key = `${p.report.jobId}:${p.report.body.queueSeq}`;
    const n = (this.finishes.get(key) ?? 1) - 1;
    if (n > 0) this.finishes.set(key, n);
    else this.finishes.delete(key);
  }

  /** Resolves when nothing is pending, or after `timeoutMs`; returns how many reports are left. */
  async idle(timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (this.queue.length && Date.now() < deadline && !this.closed)
      await new Promise((r) => setTimeout(r, Math.min(50, deadline - Date.now())));
    return this.queue.length;
  }

  /** Stops sending; what is pending stays on disk for the next daemon. */
  close(): void {
    this.closed = true;
    this.wake?.();
  }

  private kick(): void {
    this.wake?.();
    this.flushing ??= this.flush().finally(() => {
      this.flushing = null;
      if (this.queue.length && !this.closed) this.kick();
    });
  }

  private async flush(): Promise<void> {
    const { first, max } = this.opts.backoffMs ?? { first: 500, max: 15_000 };
    let delay = first;
    while (this.queue.length && !this.closed) {
      const head = this.queue[0]!;
      try {
        await this.opts.send(head.report);
      } catch (err) {
        if (!this.opts.isFinal(err)) {
          this.opts.logger.warn(
            {
              err: String(err),
              jobId: head.report.jobId,
              kind: head.report.kind,
              pending: this.queue.length,
            },
            'report not delivered (control plane unreachable, or older than this report): kept in the outbox',
          );
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, delay);
            this.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          this.wake = null;
          delay = Math.min(max, delay * 2);
          continue;
        }
        this.opts.logger.warn(
          { err: String(err), jobId: head.report.jobId, kind: head.report.kind },
          'control plane refused a report',
        );
        this.opts.onDropped?.(head.report, err);
      }
      delay = first;
      await fs.rm(head.file, { force: true });
      this.dequeue();
    }
  }
}
