import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../common/logger.js';
import { NODE_PROTOCOL_VERSION } from '../../common/node-protocol/index.js';
import { ControlPlaneError, isFinalAnswer } from '../control-plane-client.js';
import { ReportOutbox, type OutboxReport } from '../report-outbox.js';

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
const checkpoint = (jobId: string, step: number): OutboxReport => ({
  kind: 'checkpoint',
  nodeId: 'n',
  jobId,
  body: { queueSeq: 0, reportSeq: step, step, sizeBytes: 1, sha256: 'a'.repeat(64), meta: {} },
});
const finish = (jobId: string): OutboxReport => ({
  kind: 'finish',
  nodeId: 'n',
  jobId,
  body: { queueSeq: 0, outcome: 'drained', error: null },
});
class Unreachable extends Error {}
/** A report as `put` keeps it: with the protocol version it was written in. */
const stamped = (r: OutboxReport): OutboxReport => ({ ...r, protocol: NODE_PROTOCOL_VERSION });

test('reports wait on disk while the API is unreachable and the next daemon sends them, in order', async () => {
  const dir = freshDir();
  let attempts = 0;
  const first = new ReportOutbox({
    dir,
    send: async () => {
      attempts++;
      throw new Unreachable('connect ECONNREFUSED');
    },
    isFinal: (e) => !(e instanceof Unreachable),
    logger,
    backoffMs: { first: 1, max: 5 },
  });
  await first.open();
  await first.put(checkpoint('a', 10));
  await first.put(checkpoint('b', 20));
  await first.put(finish('a'));
  assert.equal(await first.idle(100), 3, 'nothing is dropped however often sending fails');
  assert.ok(attempts > 1, 'it kept trying');
  first.close();
  assert.equal(readdirSync(dir).length, 3);

  const sent: OutboxReport[] = [];
  const second = new ReportOutbox({ dir, send: async (r) => sent.push(r), isFinal: () => true, logger });
  assert.equal(await second.open(), 3);
  assert.equal(await second.idle(5000), 0);
  assert.deepEqual(sent, [checkpoint('a', 10), checkpoint('b', 20), finish('a')].map(stamped));
  assert.deepEqual(readdirSync(dir), [], 'delivered reports are deleted');
  second.close();
});

test('a refused report is dropped and does not hold back the next', async () => {
  const dir = freshDir();
  const sent: string[] = [];
  const dropped: string[] = [];
  const outbox = new ReportOutbox({
    dir,
    send: async (r) => {
      if (r.jobId === 'gone') throw new Error('404');
      sent.push(r.jobId);
    },
    isFinal: () => true,
    onDropped: (r) => dropped.push(`${r.kind} ${r.jobId}`),
    logger,
  });
  await outbox.open();
  await outbox.put(finish('gone'));
  await outbox.put(finish('kept'));
  assert.equal(await outbox.idle(5000), 0);
  assert.deepEqual(sent, ['kept']);
  assert.deepEqual(dropped, ['finish gone'], 'counted where an operator sees it');
  assert.deepEqual(readdirSync(dir), []);
  outbox.close();
});

test('a report cut short by a crash before its rename is not sent', async () => {
  const dir = freshDir();
  const { writeFileSync } = await import('node:fs');
  writeFileSync(path.join(dir, '000000000000001-000000000.json.tmp'), '{"kind":');
  const sent: OutboxReport[] = [];
  const outbox = new ReportOutbox({ dir, send: async (r) => sent.push(r), isFinal: () => true, logger });
  assert.equal(await outbox.open(), 0);
  await outbox.put(finish('x'));
  assert.equal(await outbox.idle(5000), 0);
  assert.deepEqual(sent, [stamped(finish('x'))]);
  assert.deepEqual(readdirSync(dir), [], 'the torn file is gone too');
  outbox.close();
});

test('a report refused for its protocol version is kept until the control plane takes it', async () => {
  const dir = freshDir();
  // What a daemon before protocol versions left: no version in the record.
  const { writeFileSync } = await import('node:fs');
  writeFileSync(path.join(dir, '000000000000001-000000000.json'), JSON.stringify(finish('old')));
  let accepts = 1;
  const sent: OutboxReport[] = [];
  const outbox = new ReportOutbox({
    dir,
    send: async (r) => {
      // A control plane that reads versions up to `accepts`, as the API answers (api/http/node-protocol.ts).
      if ((r.protocol ?? 1) > accepts)
        throw new ControlPlaneError(400, 'POST …/finish → 400', 'node_protocol_unsupported');
      sent.push(r);
    },
    isFinal: isFinalAnswer,
    logger,
    backoffMs: { first: 1, max: 5 },
  });
  assert.equal(await outbox.open(), 1);
  await outbox.put({ ...finish('new'), protocol: 2 });
  assert.equal(await outbox.idle(200), 1, 'the newer record waits, however often it is refused');
  assert.deepEqual(sent, [{ ...finish('old'), protocol: 1 }], 'the old record went, as version 1');
  accepts = 2; // the control plane was upgraded
  assert.equal(await outbox.idle(5000), 0);
  assert.deepEqual(sent.at(-1), { ...finish('new'), protocol: 2 });
  assert.deepEqual(readdirSync(dir), []);
  outbox.close();
  // Any other refusal is final, as before.
  assert.equal(isFinalAnswer(new ControlPlaneError(400, 'bad', 'invalid_request')), true);
  assert.equal(isFinalAnswer(new ControlPlaneError(503, 'down', 'unavailable')), false);
});
