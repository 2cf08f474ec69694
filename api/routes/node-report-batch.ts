/**
 * `POST /v1/nodes/{id}/reports`: several report records of the calling node in one request, what
 * its outbox sends after an outage (common/node-protocol/report-batch.ts; applied by
 * api/nodes/report-batch.ts). Beyond `REPORT_BATCH_MAX_RECORDS` records, or the body limit, the
 * batch is refused whole with 413 `payload_too_large` before anything is read, so the node sends
 * it again in smaller ones; any other failure of a record is that record's result alone.
 */
import type { RequestHandler, Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { ApiError } from '../../common/errors.js';
import {
  REPORT_BATCH_MAX_RECORDS,
  reportBatchEnvelopeSchema,
  reportBatchResultSchema,
  reportBatchSchema,
} from '../../common/node-protocol/index.js';
import { z } from '../../common/zod.js';
import type { ApiDeps } from '../deps.js';
import { json, registerRoute } from '../http/openapi.js';
import { nodeProtocolHeaders } from '../http/node-protocol.js';
import { parseOrThrow } from '../http/validate.js';
import { applyReportBatch } from '../nodes/report-batch.js';

export function nodeReportBatchRoute(
  r: Router,
  deps: ApiDeps,
  registry: OpenAPIRegistry,
  ownNode: RequestHandler[],
): void {
  registerRoute(registry, {
    method: 'post',
    path: '/v1/nodes/{id}/reports',
    operationId: 'reportNodeJobsBatch',
    summary: "Several of the node's report records (start, report, checkpoint, finish) in one request",
    description:
      `Up to ${REPORT_BATCH_MAX_RECORDS} records, each what the single route of its \`kind\` takes ` +
      '(`/v1/nodes/{id}/jobs/{jobId}/start`, `report`, `checkpoints`, `finish`) about job `jobId`, written in node protocol ' +
      '`protocol`, and guarded as there: applied only while the job is placed on this node in the run the record names. ' +
      'Applied in order, in one transaction, each record on its own: the answer has one result per record, in order. ' +
      '`done` (final; `applied: false` when the guard did not hold), `refused` (final: the 4xx its single route would answer, ' +
      'with `param` under `records.<i>`), `failed` (not applied for now: send it again; `node_protocol_unsupported` for a ' +
      'version this control plane does not read yet), `skipped` (not tried: an earlier record of the same job failed; send it ' +
      'again after that one). More records than the limit is `413 payload_too_large` (`param: records`), as is a body over the ' +
      'limit: nothing is applied, send fewer. A batch that cannot commit fails whole (`503`), and is applied once when sent again.',
    tags: ['nodes'],
    request: {
      params: z.object({ id: z.uuid() }),
      headers: nodeProtocolHeaders,
      body: { content: { 'application/json': { schema: reportBatchSchema } } },
    },
    errors: ['node_protocol_unsupported'],
    responses: { 200: json(reportBatchResultSchema, 'One result per record, in order') },
  });
  r.post('/v1/nodes/:id/reports', ...ownNode, async (req, res) => {
    const sent = (req.body as { records?: unknown } | undefined)?.records;
    if (Array.isArray(sent) && sent.length > REPORT_BATCH_MAX_RECORDS)
      throw new ApiError(
        'payload_too_large',
        `at most ${REPORT_BATCH_MAX_RECORDS} records per batch (${sent.length} sent): send them in smaller batches`,
        'records',
      );
    const { records } = parseOrThrow(reportBatchEnvelopeSchema, req.body ?? {});
    res.json({ results: await applyReportBatch(deps, req.params.id as string, records) });
  });
}
