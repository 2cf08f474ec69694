/**
 * Several of a node's report records in one request (`POST /v1/nodes/{id}/reports`): what its
 * outbox sends after an outage, where one request per record drained ~100 records/s. Each record
 * is what the single routes take (start, report, checkpoint, finish) with the job it is about and
 * the node protocol version it was written in (version.ts): the batch is a transport, not a new
 * message, so a record keeps its version and is raised to the control plane's as a single one is.
 *
 * The control plane applies the records in their order and answers one result per record, in the
 * same order; a record refused (bad data, a job not on this node) neither blocks nor loses the
 * others. Order matters within a job only (a run's reports are numbered and applied above a
 * high-water mark, its checkpoints come before its outcome), so once one of a job's records could
 * not be applied for now (`failed`), the job's later records of the batch are `skipped`: applying
 * them would move the mark past the failed one, and its resend would be taken for a duplicate.
 */
import { z } from '../zod.js';
import { jobFinishSchema, jobReportSchema, jobStartSchema, checkpointReportSchema } from './reports.js';

/** Records per batch; more is refused whole (413 `payload_too_large`, `param: records`). */
export const REPORT_BATCH_MAX_RECORDS = 100;

/**
 * What a daemon puts in one batch, in bytes of JSON: half the API's default body limit (1 MB,
 * TIMESHARE_BODY_LIMIT), so a batch fits a control plane configured below the default too. A
 * record larger than this goes alone, as it did before batches.
 */
export const REPORT_BATCH_TARGET_BYTES = 512 * 1024;

const version = z.number().int().min(1).max(999_999);
const head = { jobId: z.uuid(), protocol: version };

/** One record as it travels: its kind, the job, the version it was written in, its body. */
export const reportRecordSchema = z
  .discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('start'), ...head, body: jobStartSchema }),
    z.strictObject({ kind: z.literal('report'), ...head, body: jobReportSchema }),
    z.strictObject({ kind: z.literal('checkpoint'), ...head, body: checkpointReportSchema }),
    z.strictObject({ kind: z.literal('finish'), ...head, body: jobFinishSchema }),
  ])
  .openapi('NodeReportRecord', {
    description:
      'A report record: what the single route of its `kind` takes as `body`, about job `jobId`, written in node protocol `protocol`.',
  });
export type ReportRecord = z.output<typeof reportRecordSchema>;
/** A record as a daemon sends it (defaults not filled in: a record an older daemon wrote lacks them). */
export type ReportRecordWire = z.input<typeof reportRecordSchema>;
export type ReportRecordKind = ReportRecord['kind'];

/** The request: as the OpenAPI document states it (the API reads each record on its own). */
export const reportBatchSchema = z
  .strictObject({ records: z.array(reportRecordSchema).min(1).max(REPORT_BATCH_MAX_RECORDS) })
  .openapi('NodeReportBatch');

/** The envelope the API reads first, so that one record it cannot read does not refuse the rest. */
export const reportBatchEnvelopeSchema = z.strictObject({ records: z.array(z.unknown()).min(1) });

/** Why a record was not applied: the error the single route would have answered, and its status. */
export const recordErrorSchema = z.object({
  status: z.number().int(),
  code: z.string(),
  message: z.string(),
  param: z.string().nullable(),
});
export type RecordError = z.output<typeof recordErrorSchema>;

/**
 * `done`: taken, as the single route answers it (`applied: false` when its guard did not hold:
 * the job is no longer on this node, or the record is of an earlier run); final. `refused`: a 4xx
 * the single route would have answered (a field out of bounds, another job's storage key); final,
 * sending it again cannot change that. `failed`: not applied for now (a dependency failed, a
 * protocol version this control plane does not read yet); send it again. `skipped`: not tried,
 * because an earlier record of the same job failed; send it again after that one.
 */
export const reportRecordResultSchema = z
  .discriminatedUnion('result', [
    z.object({
      result: z.literal('done'),
      applied: z.boolean(),
      /** A checkpoint record's: the record it made (null when not applied). */
      checkpointId: z.uuid().nullable().optional(),
    }),
    z.object({ result: z.literal('refused'), error: recordErrorSchema }),
    z.object({ result: z.literal('failed'), error: recordErrorSchema }),
    z.object({ result: z.literal('skipped') }),
  ])
  .openapi('NodeReportResult');
export type ReportRecordResult = z.output<typeof reportRecordResultSchema>;

export const reportBatchResultSchema = z
  .object({ results: z.array(reportRecordResultSchema) })
  .openapi('NodeReportBatchResult', { description: 'One result per record, in the order of `records`.' });
export type ReportBatchResult = z.output<typeof reportBatchResultSchema>;

/** Whether the node may forget the record: the control plane's answer on it is final. */
export const isSettled = (r: ReportRecordResult) => r.result === 'done' || r.result === 'refused';
