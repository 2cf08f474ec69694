/**
 * A batch of a node's report records (common/node-protocol/report-batch.ts), applied in order in
 * one transaction (flat-transaction.ts), which commits once. Measured before batches
 * (worker-node/bench/outbox-drain.bench.ts), 1,400 records took 16 s through one request each, of
 * which 10 s were the records' own transactions; see docs/api.md "Report batches" for the figures.
 *
 * Every record is guarded as on its single route: by the job being placed on the node of the path
 * (the caller's own, ownNodeGuard) in the run the record names. A record about another node's job
 * is `done` with `applied: false` and changes nothing, as it would alone; the batch is no way around
 * that guard, since it never names a node per record. Once one of a job's records failed, the
 * job's later records are skipped (the run's high-water mark must not pass the failed one).
 *
 * A record that throws (a 4xx its single route would answer, or a failure) rolls the transaction
 * back; its result is kept and the batch runs again without it, up to `MAX_REDOS` times, then
 * record by record in transactions of their own, as the single routes apply them. What a record's
 * commit announces (events, the scheduler's wake) runs after the commit. A batch whose
 * transaction cannot commit fails whole (503/500) and nothing of it is applied; sent again, its
 * records are applied once (each run's reports and checkpoints by number, its start and outcome by
 * the run's state).
 */
import { ApiError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import {
  reportRecordSchema,
  upgradeNodeMessage,
  type RecordError,
  type ReportRecord,
  type ReportRecordResult,
} from '../../common/node-protocol/index.js';
import { toApiError } from '../http/errors.js';
import { protocolAccepted, protocolRefused } from '../http/node-protocol.js';
import { parseOrThrow } from '../http/validate.js';
import type { ApiDeps } from '../deps.js';
import { flatTransaction, NotFlat } from './flat-transaction.js';
import { applyRecord } from './report-apply.js';

const kinds = new Set(['start', 'report', 'checkpoint', 'finish']);

const errorOf = (e: ApiError): RecordError => ({
  status: e.status,
  code: e.code,
  message: e.message,
  param: e.param,
});

/**
 * Record `i` as the current protocol reads it: raised from the version it was written in, as a
 * single route raises its body (api/http/node-protocol.ts). A version this control plane does not
 * read is `failed` (the node keeps the record), anything else it cannot read `refused`.
 */
function readRecord(raw: unknown, i: number): ReportRecord | ReportRecordResult {
  const at = `records.${i}`;
  const r = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const { protocol, kind } = r;
  try {
    if (typeof protocol === 'number' && Number.isInteger(protocol) && !protocolAccepted(protocol))
      throw protocolRefused(String(protocol), `${at}.protocol`);
    const body =
      typeof protocol === 'number' && typeof kind === 'string' && kinds.has(kind)
        ? upgradeNodeMessage(kind as ReportRecord['kind'], protocol, r.body)
        : r.body;
    return parseOrThrow(reportRecordSchema, { ...r, body }, at);
  } catch (err) {
    const e = toApiError(err);
    return e.code === 'node_protocol_unsupported'
      ? { result: 'failed', error: errorOf(e) }
      : { result: 'refused', error: errorOf(e) };
  }
}

/** A record's own failure: final for a 4xx the single route would answer, else for now. */
function failure(err: unknown): ReportRecordResult {
  const e = toApiError(err);
  const final = e.status < 500 && e.code !== 'node_protocol_unsupported' && e.status !== 429;
  return { result: final ? 'refused' : 'failed', error: errorOf(e) };
}

/** Redoes of a batch's transaction, each without a record that failed in it, before going record by record. */
const MAX_REDOS = 2;

type Read = ReportRecord | ReportRecordResult;
type Applied = { results: ReportRecordResult[]; announce: (() => Promise<unknown>)[] };

/**
 * Each record in order, through `apply` (the records' own guards), with `decided` the results known
 * before (records refused or failed on reading them, or in an earlier try); a job's records after
 * one of its own that failed are skipped.
 */
async function each(
  read: Read[],
  jobIds: string[],
  decided: Map<number, ReportRecordResult>,
  apply: (i: number, rec: ReportRecord) => Promise<ReportRecordResult | null>,
): Promise<Applied | null> {
  const out: Applied = { results: [], announce: [] };
  const failedJobs = new Set<string>();
  for (const [i, rec] of read.entries()) {
    const known = decided.get(i) ?? ('result' in rec ? rec : undefined);
    const r =
      known ??
      (failedJobs.has(jobIds[i]!) ? { result: 'skipped' as const } : await apply(i, rec as ReportRecord));
    if (r === null) return null;
    if (r.result === 'failed') failedJobs.add(jobIds[i]!);
    out.results.push(r);
  }
  return out;
}

function doneOf(rec: ReportRecord, done: Awaited<ReturnType<typeof applyRecord>>): ReportRecordResult {
  return {
    result: 'done',
    applied: done.applied,
    ...(rec.kind === 'checkpoint' ? { checkpointId: done.checkpointId ?? null } : {}),
  };
}

/**
 * The batch in one transaction (flat-transaction.ts). A record that throws rolls it back: its
 * result is decided (`decided`) and null is answered, for the caller to run the batch again
 * without it. `NotFlat` is thrown for a batch that cannot run this way.
 */
async function inOneTransaction(
  deps: ApiDeps,
  nodeId: string,
  read: Read[],
  jobIds: string[],
  decided: Map<number, ReportRecordResult>,
): Promise<Applied | null> {
  const client = await deps.db.pool.connect();
  try {
    await client.query('BEGIN');
    const pool = flatTransaction(client);
    const announce: (() => Promise<unknown>)[] = [];
    const out = await each(read, jobIds, decided, async (i, rec) => {
      try {
        const done = await applyRecord(deps, pool, nodeId, rec);
        announce.push(done.announce);
        return doneOf(rec, done);
      } catch (err) {
        if (err instanceof NotFlat) throw err;
        decided.set(i, failure(err));
        return null;
      }
    });
    if (out === null) {
      // A connection that failed fails the batch (503): the node sends it again.
      await client.query('ROLLBACK');
      return null;
    }
    await client.query('COMMIT');
    return { ...out, announce };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Each record in transactions of its own, as its single route applies it: the batch's last resort. */
function recordByRecord(
  deps: ApiDeps,
  nodeId: string,
  read: Read[],
  jobIds: string[],
  decided: Map<number, ReportRecordResult>,
): Promise<Applied | null> {
  const announce: (() => Promise<unknown>)[] = [];
  return each(read, jobIds, decided, async (_i, rec) => {
    try {
      const done = await applyRecord(deps, deps.db.pool, nodeId, rec);
      announce.push(done.announce);
      return doneOf(rec, done);
    } catch (err) {
      return failure(err);
    }
  }).then((out) => out && { ...out, announce });
}

export async function applyReportBatch(
  deps: ApiDeps,
  nodeId: string,
  raw: unknown[],
  logger: Logger = deps.logger,
): Promise<ReportRecordResult[]> {
  const read = raw.map(readRecord);
  const jobIds = raw.map((r) => String((r as { jobId?: unknown } | null)?.jobId));
  const decided = new Map<number, ReportRecordResult>();
  let applied: Applied | null = null;
  try {
    for (let tries = 0; applied === null && tries <= MAX_REDOS; tries++)
      applied = await inOneTransaction(deps, nodeId, read, jobIds, decided);
  } catch (err) {
    if (!(err instanceof NotFlat)) throw err;
    logger.warn({ nodeId, err: err.message }, 'report batch applied record by record');
  }
  // Past the redos (many records failing), or not flat: what is left, one record at a time.
  applied ??= (await recordByRecord(deps, nodeId, read, jobIds, decided))!;
  for (const [i, r] of applied.results.entries())
    if (r.result === 'refused' || r.result === 'failed')
      logger.warn(
        { nodeId, record: i, kind: (raw[i] as { kind?: unknown } | null)?.kind, ...r.error },
        `node report record ${r.result}`,
      );
  for (const fn of applied.announce) await fn();
  return applied.results;
}
