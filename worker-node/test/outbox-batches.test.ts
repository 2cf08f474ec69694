/**
 * The outbox sends its records in batches and settles each by the control plane's result for it:
 * a record refused is dropped, one failed (and its job's later ones, skipped) stays in order for
 * the next batch, and the others are not held back. A fake control plane keeps what the API keeps
 * (a per-run high-water mark of report numbers), so a record applied out of order would be lost.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../common/logger.js';
import type { ReportRecordResult, ReportRecordWire } from '../../common/node-protocol/index.js';
import { ControlPlaneError, type ControlPlaneClient } from '../control-plane-client.js';
import { deliverReports } from '../outbox-delivery.js';
import { ReportOutbox, type OutboxReport, type RecordVerdict } from '../report-outbox.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const freshDir = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'timeshare-outbox-'));
  dirs.push(d);
  return d;
};
const logger = createLogger('test', 'silent');
const backoffMs = { first: 1, max: 5 };

const report = (jobId: string, reportSeq: number, nodeId = 'n'): OutboxReport => ({
  kind: 'report',
  nodeId,
  jobId,
  body: { queueSeq: 0, reportSeq, metrics: [], profiles: [], events: [], deviceSeconds: 0 },
});
const finish = (jobId: string): OutboxReport => ({
  kind: 'finish',
  nodeId: 'n',
  jobId,
  body: { queueSeq: 0, outcome: 'succeeded', error: null },
});
const seqOf = (r: OutboxReport) => (r.kind === 'report' ? r.body.reportSeq : 0);
const label = (r: OutboxReport) => `${r.jobId}${r.kind === 'finish' ? '!' : seqOf(r)}`;

/** Puts `reports` while the control plane is away, as an outage leaves them. */
async function leftByOutage(dir: string, reports: OutboxReport[]): Promise<void> {
  const down = new ReportOutbox({
    dir,
    send: () => Promise.reject(new Error('unreachable')),
    isFinal: () => false,
    logger,
    backoffMs: { first: 60_000, max: 60_000 },
  });
  await down.open();
  for (const r of reports) await down.put(r);
  down.close();
}

test('records go in batches of at most the limit, one node each, in order', async () => {
  const dir = freshDir();
  const all = [
    ...Array.from({ length: 7 }, (_, i) => report('a', i + 1)),
    report('x', 1, 'earlier-node-id'),
    report('a', 8),
  ];
  await leftByOutage(dir, all);
  const batches: string[][] = [];
  const outbox = new ReportOutbox({
    dir,
    sendBatch: async (rs) => {
      batches.push(rs.map(label));
      return rs.map(() => ({ kind: 'delivered' }));
    },
    batch: { maxRecords: 3, maxBytes: 1 << 20 },
    logger,
  });
  assert.equal(await outbox.open(), 9);
  assert.equal(await outbox.idle(5000), 0);
  outbox.close();
  assert.deepEqual(batches, [['a1', 'a2', 'a3'], ['a4', 'a5', 'a6'], ['a7'], ['x1'], ['a8']]);
  assert.deepEqual(readdirSync(dir), [], 'delivered records are deleted');
});

test('a batch stays within its bytes; a record larger than them goes alone', async () => {
  const dir = freshDir();
  const big: OutboxReport = {
    ...report('a', 2),
    body: { ...(report('a', 2).body as object), metrics: [{ step: 1, name: 'x'.repeat(2000), value: 1 }] },
  } as OutboxReport;
  await leftByOutage(dir, [report('a', 1), big, report('a', 3), report('a', 4)]);
  const sizes: number[] = [];
  const outbox = new ReportOutbox({
    dir,
    sendBatch: async (rs) => {
      sizes.push(rs.length);
      return rs.map(() => ({ kind: 'delivered' }));
    },
    batch: { maxRecords: 100, maxBytes: 1000 },
    logger,
  });
  await outbox.open();
  assert.equal(await outbox.idle(5000), 0);
  outbox.close();
  assert.deepEqual(sizes, [1, 1, 2]);
});

/**
 * A control plane as the API keeps a run's reports: applied above the newest number applied, a
 * resend answered as done. `failOnce` names records (label) whose first try fails for now.
 */
function fakeControlPlane(opts: { failOnce?: Set<string>; refuse?: Set<string> }) {
  const mark = new Map<string, number>();
  const applied: string[] = [];
  const batches: string[][] = [];
  const sendBatch = async (rs: OutboxReport[]): Promise<RecordVerdict[]> => {
    batches.push(rs.map(label));
    const failedJobs = new Set<string>();
    return rs.map((r): RecordVerdict => {
      const l = label(r);
      if (failedJobs.has(r.jobId)) return { kind: 'kept' };
      if (opts.refuse?.has(l))
        return { kind: 'refused', err: new ControlPlaneError(400, 'bad', 'invalid_request') };
      if (opts.failOnce?.delete(l)) {
        failedJobs.add(r.jobId);
        return { kind: 'kept', err: 'internal' };
      }
      if (r.kind === 'report') {
        if (seqOf(r) <= (mark.get(r.jobId) ?? 0)) return { kind: 'delivered' }; // a resend: nothing applied
        mark.set(r.jobId, seqOf(r));
      }
      applied.push(l);
      return { kind: 'delivered' };
    });
  };
  return { sendBatch, applied, batches };
}

test('one record refused is dropped; the others of its batch are applied', async () => {
  const dir = freshDir();
  await leftByOutage(dir, [report('a', 1), report('b', 1), report('a', 2), finish('b')]);
  const cp = fakeControlPlane({ refuse: new Set(['b1']) });
  const dropped: string[] = [];
  const outbox = new ReportOutbox({
    dir,
    sendBatch: cp.sendBatch,
    onDropped: (r) => dropped.push(label(r)),
    logger,
    backoffMs,
  });
  await outbox.open();
  assert.equal(await outbox.idle(5000), 0);
  outbox.close();
  assert.deepEqual(cp.applied, ['a1', 'a2', 'b!']);
  assert.deepEqual(dropped, ['b1']);
  assert.equal(cp.batches.length, 1, 'one request');
  assert.deepEqual(readdirSync(dir), []);
});

test('after a record failed mid-batch, its job resumes from it, in order, and nothing is lost or doubled', async () => {
  const dir = freshDir();
  await leftByOutage(dir, [
    report('a', 1),
    report('b', 1),
    report('a', 2),
    report('b', 2),
    report('a', 3),
    finish('a'),
  ]);
  const cp = fakeControlPlane({ failOnce: new Set(['a2']) });
  const outbox = new ReportOutbox({ dir, sendBatch: cp.sendBatch, logger, backoffMs });
  await outbox.open();
  assert.equal(await outbox.idle(5000), 0);
  outbox.close();
  // b went on in the first batch; a's records from the failed one were sent again, in order.
  assert.deepEqual(cp.batches, [
    ['a1', 'b1', 'a2', 'b2', 'a3', 'a!'],
    ['a2', 'a3', 'a!'],
  ]);
  assert.deepEqual(cp.applied, ['a1', 'b1', 'b2', 'a2', 'a3', 'a!']);
});

test("a run's kept outcome still counts as held until it is delivered", async () => {
  const dir = freshDir();
  await leftByOutage(dir, [report('a', 1), finish('a')]);
  const cp = fakeControlPlane({ failOnce: new Set(['a1']) });
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  let calls = 0;
  const outbox = new ReportOutbox({
    dir,
    sendBatch: async (rs) => {
      if (++calls === 2) await gate;
      return cp.sendBatch(rs);
    },
    logger,
    backoffMs,
  });
  await outbox.open();
  assert.equal(outbox.holdsFinish('a', 0), true);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(outbox.holdsFinish('a', 0), true, 'its report failed: the finish was skipped and kept');
  release();
  assert.equal(await outbox.idle(5000), 0);
  assert.equal(outbox.holdsFinish('a', 0), false);
  outbox.close();
});

test('a whole batch that could not be sent is kept, and sent again', async () => {
  const dir = freshDir();
  await leftByOutage(dir, [report('a', 1), report('a', 2)]);
  let up = false;
  const sent: string[] = [];
  const outbox = new ReportOutbox({
    dir,
    sendBatch: async (rs) => {
      if (!up) throw new Error('connect ECONNREFUSED');
      sent.push(...rs.map(label));
      return rs.map(() => ({ kind: 'delivered' }));
    },
    logger,
    backoffMs,
  });
  await outbox.open();
  assert.equal(await outbox.idle(50), 2);
  up = true;
  assert.equal(await outbox.idle(5000), 0);
  outbox.close();
  assert.deepEqual(sent, ['a1', 'a2']);
});

/** The client's side of deliveries, for deliverReports. */
function fakeClient(batch: (records: ReportRecordWire[]) => Promise<ReportRecordResult[]>) {
  const single: string[] = [];
  const one = async (_n: string, jobId: string) => {
    single.push(jobId);
    return true;
  };
  const client = {
    reportBatch: (_n: string, records: ReportRecordWire[]) => batch(records),
    jobStarted: one,
    jobReport: one,
    jobCheckpoint: one,
    jobFinished: one,
  } as unknown as ControlPlaneClient;
  return { client, single };
}

test('a control plane without batches gets the records one at a time, and is asked again later', async () => {
  let tries = 0;
  const { client, single } = fakeClient(async () => {
    tries++;
    throw new ControlPlaneError(404, 'no route for POST /v1/nodes/n/reports', 'not_found');
  });
  let now = 0;
  const { sendBatch } = deliverReports(client, { now: () => now });
  const verdicts = await sendBatch([report('a', 1), report('b', 1)]);
  assert.deepEqual(
    verdicts,
    [{ kind: 'delivered' }, { kind: 'delivered' }],
    'a 404 of the route drops nothing',
  );
  assert.deepEqual(single, ['a', 'b']);
  await sendBatch([report('a', 2)]);
  assert.equal(tries, 1, 'not asked again at once');
  now = 61_000;
  await sendBatch([report('a', 3)]);
  assert.equal(tries, 2);
});

test('a batch too large for the control plane is halved until it fits', async () => {
  const sizes: number[] = [];
  const { client } = fakeClient(async (records) => {
    sizes.push(records.length);
    if (records.length > 2) throw new ControlPlaneError(413, 'too large', 'payload_too_large');
    return records.map(() => ({ result: 'done', applied: true }));
  });
  const { sendBatch } = deliverReports(client);
  const rs = Array.from({ length: 8 }, (_, i) => report('a', i + 1));
  const verdicts = await sendBatch(rs);
  assert.deepEqual(sizes, [8, 4, 2]);
  assert.deepEqual(
    verdicts.map((v) => v.kind),
    ['delivered', 'delivered', 'kept', 'kept', 'kept', 'kept', 'kept', 'kept'],
    'the rest are sent next, untried',
  );
});

test("each record's result decides: done and refused settle it, failed and skipped keep it", async () => {
  const { client } = fakeClient(async () => [
    { result: 'done', applied: false },
    {
      result: 'refused',
      error: { status: 400, code: 'invalid_request', message: 'bad', param: 'records.1.body' },
    },
    {
      result: 'failed',
      error: { status: 400, code: 'node_protocol_unsupported', message: 'newer', param: null },
    },
    { result: 'skipped' },
  ]);
  const { sendBatch } = deliverReports(client);
  const verdicts = await sendBatch([report('a', 1), report('b', 1), report('c', 1), report('c', 2)]);
  assert.deepEqual(
    verdicts.map((v) => v.kind),
    ['delivered', 'refused', 'kept', 'kept'],
  );
  const refused = verdicts[1] as { err: ControlPlaneError };
  assert.equal(refused.err.code, 'invalid_request');
});
