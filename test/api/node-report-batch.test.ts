/**
 * `POST /v1/nodes/{id}/reports`: a node's report records in one request, each applied as its single
 * route applies it and answered on its own. The batch is no way around the node's trust scope (a
 * record about another node's job changes nothing), a record refused or failed neither blocks nor
 * loses the others, and a batch sent again (its answer lost, or after a record failed mid-batch)
 * applies nothing twice.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { REPORT_BATCH_MAX_RECORDS } from '../../common/node-protocol/index.js';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';
import { DocumentOracle } from '../helpers/openapi-doc.js';
import { placeOnNode, registerTestNode, type TestNode } from '../helpers/test-node.js';

let h: Harness;
let acme: TestTenant;
let node: TestNode;
let other: TestNode;
let oracle: DocumentOracle;

before(async () => {
  h = await startHarness();
  acme = await h.createTenant('acme');
  node = await registerTestNode(h, 'batch-node');
  other = await registerTestNode(h, 'other-node');
  oracle = new DocumentOracle((await h.http.get('/v1/openapi.json').expect(200)).body);
});
after(() => h.close());

const submit = async (name: string) =>
  (
    await acme
      .as(h.http.post('/v1/jobs'))
      .send({ name, workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body.id as string;

/** A queued job placed on `on`, and the run's number. */
async function placed(name: string, on: TestNode = node) {
  const jobId = await submit(name);
  return { jobId, queueSeq: await placeOnNode(h, on.id, jobId) };
}

const start = (jobId: string, queueSeq: number) => ({
  kind: 'start',
  jobId,
  protocol: 3,
  body: { queueSeq, resumedFromStep: null },
});
const report = (jobId: string, queueSeq: number, reportSeq: number, extra: object = {}) => ({
  kind: 'report',
  jobId,
  protocol: 3,
  body: {
    queueSeq,
    reportSeq,
    deviceSeconds: 1,
    metrics: [{ step: reportSeq, name: 'loss', value: 0.5 }],
    profiles: [{ stage: 'train', step: reportSeq, seconds: 0.2 }],
    ...extra,
  },
});
const checkpoint = (jobId: string, queueSeq: number, reportSeq: number, step: number) => ({
  kind: 'checkpoint',
  jobId,
  protocol: 3,
  body: { queueSeq, reportSeq, step, sizeBytes: 1, sha256: 'a'.repeat(64) },
});
const finish = (jobId: string, queueSeq: number) => ({
  kind: 'finish',
  jobId,
  protocol: 3,
  body: { queueSeq, outcome: 'succeeded', error: null },
});

/** Sends a batch as `as`, and checks the answer against the OpenAPI document. */
async function send(records: unknown[], as: TestNode = node, nodeId = as.id) {
  const res = await as.as(h.http.post(`/v1/nodes/${nodeId}/reports`)).send({ records });
  const why = oracle.mismatch(
    'post',
    '/v1/nodes/{id}/reports',
    res.status,
    res.headers['content-type'],
    res.body,
  );
  assert.equal(why, null, why ?? '');
  return res;
}

/** What the job's history holds: rows a duplicate would add to. */
async function state(jobId: string) {
  const r = await h.api.deps.db.pool.query(
    `SELECT j.status::text AS status, j.device_seconds AS seconds,
            (SELECT count(*)::int FROM metrics WHERE job_id = j.id) AS metrics,
            (SELECT count(*)::int FROM stage_profiles WHERE job_id = j.id) AS profiles,
            (SELECT count(*)::int FROM usage_ledger WHERE job_id = j.id) AS ledger,
            (SELECT count(*)::int FROM checkpoints WHERE job_id = j.id) AS checkpoints,
            (SELECT count(*)::int FROM job_events WHERE job_id = j.id) AS events
       FROM jobs j WHERE j.id = $1`,
    [jobId],
  );
  return r.rows[0] as Record<string, unknown>;
}

test("a run's records in one batch: applied in order, one result each", async () => {
  const { jobId, queueSeq } = await placed('whole-run');
  const res = await send([
    start(jobId, queueSeq),
    report(jobId, queueSeq, 1),
    checkpoint(jobId, queueSeq, 2, 10),
    report(jobId, queueSeq, 3),
    finish(jobId, queueSeq),
  ]);
  assert.equal(res.status, 200);
  assert.deepEqual(
    res.body.results.map((r: { result: string; applied: boolean }) => `${r.result}:${r.applied}`),
    ['done:true', 'done:true', 'done:true', 'done:true', 'done:true'],
  );
  assert.match(res.body.results[2].checkpointId, /^[0-9a-f-]{36}$/);
  const s = await state(jobId);
  assert.equal(s.status, 'succeeded');
  assert.equal(s.metrics, 2);
  assert.equal(s.checkpoints, 1);
});

test("a node's batch with another node's job: that record changes nothing, its own are applied", async () => {
  const own = await placed('own-job');
  const theirs = await placed('their-job', other);
  const before = await state(theirs.jobId);
  const res = await send([
    start(own.jobId, own.queueSeq),
    start(theirs.jobId, theirs.queueSeq),
    report(theirs.jobId, theirs.queueSeq, 1),
    checkpoint(theirs.jobId, theirs.queueSeq, 2, 10),
    finish(theirs.jobId, theirs.queueSeq),
    report(own.jobId, own.queueSeq, 1),
  ]);
  assert.equal(res.status, 200);
  assert.deepEqual(
    res.body.results.map((r: { applied: boolean }) => r.applied),
    [true, false, false, false, false, true],
  );
  assert.deepEqual(await state(theirs.jobId), before, "the other node's job is untouched");
  assert.equal((await state(own.jobId)).metrics, 1);
  // Nor can a node post a batch on another node's path.
  const path = await send([report(theirs.jobId, theirs.queueSeq, 1)], node, other.id);
  assert.equal(path.status, 404);
  assert.deepEqual(await state(theirs.jobId), before);
});

test('a record refused or of a newer protocol does not block or lose the others', async () => {
  const a = await placed('refusals-a');
  const b = await placed('refusals-b');
  const res = await send([
    start(a.jobId, a.queueSeq),
    report(a.jobId, a.queueSeq, 1, { metrics: [{ step: -1, name: 'loss', value: 1 }] }),
    {
      ...checkpoint(a.jobId, a.queueSeq, 2, 10),
      body: { ...checkpoint(a.jobId, a.queueSeq, 2, 10).body, storageKey: 'elsewhere' },
    },
    { ...report(b.jobId, b.queueSeq, 1), protocol: 99 },
    report(b.jobId, b.queueSeq, 2),
    { kind: 'teleport', jobId: a.jobId, protocol: 3, body: {} },
    report(a.jobId, a.queueSeq, 3),
  ]);
  assert.equal(res.status, 200);
  const [started, badStep, badKey, newer, afterNewer, badKind, last] = res.body.results;
  assert.equal(started.result, 'done');
  assert.equal(badStep.result, 'refused');
  assert.equal(badStep.error.code, 'invalid_request');
  assert.equal(badStep.error.param, 'records.1.body.metrics.0.step');
  assert.equal(badKey.result, 'refused');
  assert.equal(badKey.error.param, 'storageKey');
  assert.equal(newer.result, 'failed', 'kept by the node until the control plane reads it');
  assert.equal(newer.error.code, 'node_protocol_unsupported');
  assert.equal(afterNewer.result, 'skipped', "b's later record waits for the one before it");
  assert.equal(badKind.result, 'refused');
  assert.deepEqual(last, { result: 'done', applied: true });
  assert.equal((await state(a.jobId)).metrics, 1, "a's good report went in");
  assert.equal((await state(a.jobId)).checkpoints, 0);
  assert.equal((await state(b.jobId)).metrics, 0);
});

test('a batch sent again applies nothing twice', async () => {
  const { jobId, queueSeq } = await placed('resent');
  const batch = [
    start(jobId, queueSeq),
    report(jobId, queueSeq, 1),
    checkpoint(jobId, queueSeq, 2, 10),
    report(jobId, queueSeq, 3),
  ];
  const first = await send(batch);
  const once = await state(jobId);
  const again = await send(batch);
  assert.equal(again.status, 200);
  assert.deepEqual(
    again.body.results.map((r: { result: string; applied: boolean }) => `${r.result}:${r.applied}`),
    ['done:false', 'done:true', 'done:true', 'done:true'],
    'reports and checkpoints answer as applied, the start as already taken',
  );
  assert.equal(again.body.results[2].checkpointId, first.body.results[2].checkpointId);
  assert.deepEqual(await state(jobId), once, 'no metric, profile, ledger row, checkpoint or event twice');
});

test('after a record failed mid-batch, the batch sent again completes it once', async () => {
  const a = await placed('mid-a');
  const b = await placed('mid-b');
  const { pool } = h.api.deps.db;
  // A fault of the database on one record (a stage profile of stage 'boom'): not the node's fault.
  await pool.query(`CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.stage = 'boom' THEN RAISE EXCEPTION 'disk on fire'; END IF; RETURN NEW; END $$`);
  await pool.query(
    `CREATE TRIGGER boom BEFORE INSERT ON stage_profiles FOR EACH ROW EXECUTE FUNCTION boom()`,
  );
  const batch = [
    start(a.jobId, a.queueSeq),
    start(b.jobId, b.queueSeq),
    report(a.jobId, a.queueSeq, 1),
    report(a.jobId, a.queueSeq, 2, { profiles: [{ stage: 'boom', step: 2, seconds: 0.1 }] }),
    report(b.jobId, b.queueSeq, 1),
    report(a.jobId, a.queueSeq, 3),
    finish(a.jobId, a.queueSeq),
  ];
  try {
    const res = await send(batch);
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.results.map((r: { result: string }) => r.result),
      ['done', 'done', 'done', 'failed', 'done', 'skipped', 'skipped'],
    );
    assert.equal(res.body.results[3].error.code, 'internal');
    const s = await state(a.jobId);
    assert.equal(s.metrics, 1, "a's first report only: its third would pass the failed second");
    assert.equal(s.status, 'running');
    assert.equal((await state(b.jobId)).metrics, 1, 'the other job was not held back');
  } finally {
    await pool.query('DROP TRIGGER boom ON stage_profiles');
    await pool.query('DROP FUNCTION boom()');
  }
  const before = await state(b.jobId);
  const again = await send(batch);
  assert.deepEqual(
    again.body.results.map((r: { result: string }) => r.result),
    ['done', 'done', 'done', 'done', 'done', 'done', 'done'],
  );
  const s = await state(a.jobId);
  assert.equal(s.metrics, 3);
  assert.equal(s.profiles, 3, "each of a's reports' profiles once");
  assert.equal(s.ledger, 3, "each of a's reports charged once");
  assert.equal(s.status, 'succeeded');
  assert.deepEqual(await state(b.jobId), before, "b's report was not applied twice");
});

test('limits: no records is 400, more than the limit 413, a body over the limit 413', async () => {
  const empty = await send([]);
  assert.equal(empty.status, 400);
  assert.equal(empty.body.error.code, 'invalid_request');
  assert.equal(empty.body.error.param, 'records');
  const { jobId } = await placed('limits');
  const many = Array.from({ length: REPORT_BATCH_MAX_RECORDS + 1 }, (_, i) => report(jobId, 0, i + 1));
  const tooMany = await send(many);
  assert.equal(tooMany.status, 413);
  assert.equal(tooMany.body.error.code, 'payload_too_large');
  assert.equal(tooMany.body.error.param, 'records');
  assert.equal((await state(jobId)).metrics, 0, 'nothing of it applied');
  const huge = report(jobId, 0, 1, {
    metrics: [{ step: 1, name: 'x', value: 1, pad: 'p'.repeat(1_100_000) }],
  });
  const tooBig = await send([huge]);
  assert.equal(tooBig.status, 413);
  assert.equal(tooBig.body.error.code, 'payload_too_large');
  const notObject = await send(['nonsense', null] as unknown[]);
  assert.deepEqual(
    notObject.body.results.map((r: { result: string }) => r.result),
    ['refused', 'refused'],
  );
  const unknownJob = await send([report(randomUUID(), 0, 1)]);
  assert.deepEqual(unknownJob.body.results, [{ result: 'done', applied: false }]);
});
