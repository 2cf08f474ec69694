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
 *
 * Records go in batches from the head of the queue (`sendBatch`: up to `batch.maxRecords` of one
 * node, `batch.maxBytes` of JSON), one request each (outbox-delivery.ts), and the control plane
 * answers for each record: settled (applied, or refused for good) ones are removed, the others
 * stay where they are, in order, for the next batch. Whether a record may be removed is the
 * control plane's word on that record alone; one kept never holds back the next batch's others
 * (the control plane skips a job's later records itself, report-batch.ts). Sending one record at a
 * time drained ~85 records/s after an outage; docs/api.md "Report batches" has the figures.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../common/logger.js';
import {
  NODE_PROTOCOL_VERSION,
  REPORT_BATCH_MAX_RECORDS,
  REPORT_BATCH_TARGET_BYTES,
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

/**
 * The control plane's word on one record of a batch: `delivered` and `refused` (for good) settle
 * it, and it is removed; `kept` leaves it in the outbox for a later batch (not applied for now, or
 * not tried).
 */
export type RecordVerdict =
  { kind: 'delivered' } | { kind: 'refused'; err: unknown } | { kind: 'kept'; err?: unknown };

interface OutboxCommon {
  dir: string;
  logger: Logger;
  /** Told of each report dropped because the control plane refused it for good. */
  onDropped?: (r: OutboxReport, err: unknown) => void;
  /** Retry delays, ms: doubling from the first up to the last. */
  backoffMs?: { first: number; max: number };
  /** The most one batch holds (sendBatch only). */
  batch?: { maxRecords: number; maxBytes: number };
}

/** How records reach the control plane: several at a time, or one at a time. */
type Transport =
  | {
      /**
       * Sends `reports` (the head of the queue, all of one node) and answers one verdict per
       * report, in order; throws when the control plane could not be asked (all are kept).
       */
      sendBatch: (reports: OutboxReport[]) => Promise<RecordVerdict[]>;
      send?: never;
      isFinal?: never;
    }
  | {
      send: (r: OutboxReport) => Promise<unknown>;
      /** Whether a failed send is the control plane's final answer (drop it) rather than a transient failure. */
      isFinal: (err: unknown) => boolean;
      sendBatch?: never;
    };

export type OutboxOptions = OutboxCommon & Transport;

interface Pending {
  file: string;
  report: OutboxReport;
  /** Its JSON's length, what it adds to a batch. */
  bytes: number;
}

export class ReportOutbox {
  private readonly queue: Pending[] = [];
  private seq = 0;
  private flushing: Promise<void> | null = null;
  private closed = false;
  private wake: (() => void) | null = null;
  /** `jobId:queueSeq` → finish records of that run pending here (loaded from disk or put since). */
  private readonly finishes = new Map<string, number>();
  private readonly sendBatch: (reports: OutboxReport[]) => Promise<RecordVerdict[]>;
  private readonly limits: { maxRecords: number; maxBytes: number };

  constructor(private readonly opts: OutboxOptions) {
    const { send, isFinal } = opts;
    if (opts.sendBatch) {
      this.sendBatch = opts.sendBatch;
      this.limits = opts.batch ?? {
        maxRecords: REPORT_BATCH_MAX_RECORDS,
        maxBytes: REPORT_BATCH_TARGET_BYTES,
      };
    } else {
      // One at a time: a failure that is not final keeps it (and, as it heads the queue, all after it).
      this.sendBatch = async ([r]) => {
        try {
          await send!(r!);
          return [{ kind: 'delivered' }];
        } catch (err) {
          if (isFinal!(err)) return [{ kind: 'refused', err }];
          throw err;
        }
      };
      this.limits = { maxRecords: 1, maxBytes: 0 };
    }
  }

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
      let text: string;
      try {
        text = await fs.readFile(file, 'utf8');
        report = JSON.parse(text) as OutboxReport;
      } catch {
        // Unreadable (a disk that lost the data despite the fsync): nothing to send.
        await fs.rm(file, { force: true });
        continue;
      }
      this.enqueue({ file, report: { ...report, protocol: report.protocol ?? 1 }, bytes: text.length });
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
    const text = JSON.stringify(report);
    const fh = await fs.open(tmp, 'w');
    try {
      await fh.writeFile(text);
      // Metrics and profiles may be lost with the machine; checkpoint records and outcomes may not.
      if (report.kind !== 'report') await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.rename(tmp, file);
    this.enqueue({ file, report, bytes: text.length });
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

  /** Settled records leave from anywhere in the queue: the ones kept before them stay, in order. */
  private remove(p: Pending): void {
    const i = this.queue.indexOf(p);
    if (i >= 0) this.queue.splice(i, 1);
    if (p.report.kind !== 'finish') return;
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

  /** The head of the queue and what follows it of the same node, within the batch's limits. */
  private take(): Pending[] {
    const head = this.queue[0]!;
    const out = [head];
    let bytes = head.bytes;
    for (const p of this.queue.slice(1, this.limits.maxRecords)) {
      // A record an earlier daemon left may be of the node's earlier id: a request speaks for one.
      if (p.report.nodeId !== head.report.nodeId || bytes + p.bytes > this.limits.maxBytes) break;
      out.push(p);
      bytes += p.bytes;
    }
    return out;
  }

  private async backoff(delay: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delay);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wake = null;
  }

  private async flush(): Promise<void> {
    const { first, max } = this.opts.backoffMs ?? { first: 500, max: 15_000 };
    let delay = first;
    while (this.queue.length && !this.closed) {
      const batch = this.take();
      let verdicts: RecordVerdict[];
      try {
        verdicts = await this.sendBatch(batch.map((p) => p.report));
      } catch (err) {
        verdicts = batch.map(() => ({ kind: 'kept', err }));
      }
      const settled = batch.filter(
        (p, i) => verdicts[i]?.kind === 'delivered' || verdicts[i]?.kind === 'refused',
      );
      for (const [i, p] of batch.entries()) {
        const v = verdicts[i];
        if (v?.kind !== 'refused') continue;
        this.opts.logger.warn(
          { err: String(v.err), jobId: p.report.jobId, kind: p.report.kind },
          'control plane refused a report',
        );
        this.opts.onDropped?.(p.report, v.err);
      }
      await Promise.all(settled.map((p) => fs.rm(p.file, { force: true })));
      for (const p of settled) this.remove(p);
      if (settled.length === batch.length) {
        delay = first;
        continue;
      }
      const kept = batch.find((p) => !settled.includes(p))!;
      const why = verdicts[batch.indexOf(kept)];
      this.opts.logger.warn(
        {
          err: why?.kind === 'kept' && why.err !== undefined ? String(why.err) : 'not tried',
          jobId: kept.report.jobId,
          kind: kept.report.kind,
          kept: batch.length - settled.length,
          pending: this.queue.length,
        },
        'report not delivered (control plane unreachable, or older than this report): kept in the outbox',
      );
      // What the control plane settled shows it is there: the next batch goes now, the kept ones first.
      if (settled.length) {
        delay = first;
        continue;
      }
      await this.backoff(delay);
      delay = Math.min(max, delay * 2);
    }
  }
}
