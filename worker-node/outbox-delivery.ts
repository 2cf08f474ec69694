/**
 * How the outbox's records reach the control plane (report-outbox.ts `sendBatch`): in batches
 * (`POST /v1/nodes/{id}/reports`, common/node-protocol/report-batch.ts), each record settled or
 * kept by the control plane's result for it. Whenever the batch route gives no per-record answer
 * the records go one at a time through their single routes, as before batches, and each gets its
 * own answer there; a batch answer alone never drops a record:
 * - 404 or 405: a control plane older than batches (no such route, or a node it does not know:
 *   the single routes tell those apart per record). Batches are tried again after a minute, as the
 *   control plane may be upgraded meanwhile.
 * - 413: the batch is more than the control plane takes; the limit is halved (until it takes one).
 * - Any other final answer (a 4xx): one record at a time, for this batch.
 * A failure that is not final (unreachable, 5xx, 429, a newer protocol than the control plane's)
 * keeps the whole batch, and the outbox tries again later.
 */
import {
  REPORT_BATCH_MAX_RECORDS,
  type ReportRecordResult,
  type ReportRecordWire,
} from '../common/node-protocol/index.js';
import { ControlPlaneError, isFinalAnswer, type ControlPlaneClient } from './control-plane-client.js';
import type { OutboxReport, RecordVerdict } from './report-outbox.js';

/** How long a control plane without the batch route is not asked for it again. */
const BATCH_RETRY_MS = 60_000;

export interface DeliveryOptions {
  /** False: one record per request, as before batches (bench: the figure before). */
  batch?: boolean;
  now?: () => number;
}

/** One record through its single route. */
function sendOne(client: ControlPlaneClient, r: OutboxReport): Promise<unknown> {
  switch (r.kind) {
    case 'start':
      return client.jobStarted(r.nodeId, r.jobId, r.body, r.protocol);
    case 'report':
      return client.jobReport(r.nodeId, r.jobId, r.body, r.protocol);
    case 'checkpoint':
      return client.jobCheckpoint(r.nodeId, r.jobId, r.body, r.protocol);
    case 'finish':
      return client.jobFinished(r.nodeId, r.jobId, r.body, r.protocol);
  }
}

/**
 * Records in order, one request each, until one fails for now: it and the rest are kept (the first
 * one's failure is thrown: nothing was settled), so a job's records never pass one kept.
 */
async function oneByOne(client: ControlPlaneClient, reports: OutboxReport[]): Promise<RecordVerdict[]> {
  const out: RecordVerdict[] = [];
  for (const r of reports) {
    try {
      await sendOne(client, r);
      out.push({ kind: 'delivered' });
    } catch (err) {
      if (isFinalAnswer(err)) {
        out.push({ kind: 'refused', err });
        continue;
      }
      if (!out.length) throw err;
      while (out.length < reports.length) out.push({ kind: 'kept', err });
      break;
    }
  }
  return out;
}

const wire = (r: OutboxReport): ReportRecordWire =>
  ({ kind: r.kind, jobId: r.jobId, protocol: r.protocol ?? 1, body: r.body }) as ReportRecordWire;

function verdictOf(r: OutboxReport, res: ReportRecordResult): RecordVerdict {
  switch (res.result) {
    case 'done':
      return { kind: 'delivered' };
    case 'refused': {
      const { status, code, message } = res.error;
      return {
        kind: 'refused',
        err: new ControlPlaneError(status, `${r.kind} ${r.jobId} → ${status}: ${message}`, code),
      };
    }
    case 'failed':
      return { kind: 'kept', err: `${res.error.code}: ${res.error.message}` };
    case 'skipped':
      return { kind: 'kept', err: 'skipped: an earlier record of its job was kept' };
  }
}

export function deliverReports(client: ControlPlaneClient, opts: DeliveryOptions = {}) {
  const now = opts.now ?? Date.now;
  let batchesFrom = opts.batch === false ? Infinity : 0;
  let limit = REPORT_BATCH_MAX_RECORDS;
  const sendBatch = async (reports: OutboxReport[]): Promise<RecordVerdict[]> => {
    if (now() < batchesFrom) return oneByOne(client, reports);
    // Past the limit a 413 taught, the rest are kept untried: the outbox sends them next.
    const part = reports.slice(0, limit);
    let results: ReportRecordResult[];
    try {
      results = await client.reportBatch(part[0]!.nodeId, part.map(wire));
    } catch (err) {
      if (!(err instanceof ControlPlaneError) || !isFinalAnswer(err)) throw err;
      if (err.status === 413 && part.length > 1) {
        limit = Math.ceil(part.length / 2);
        return sendBatch(reports);
      }
      if (err.status === 404 || err.status === 405) batchesFrom = now() + BATCH_RETRY_MS;
      return oneByOne(client, reports);
    }
    // A batch the control plane took: the limit a 413 halved grows back (one record was too big).
    limit = Math.min(REPORT_BATCH_MAX_RECORDS, limit * 2);
    return reports.map((r, i) => (i < part.length ? verdictOf(r, results[i]!) : { kind: 'kept' }));
  };
  return { sendBatch };
}
