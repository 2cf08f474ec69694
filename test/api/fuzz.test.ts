/**
 * Property-based fuzzing driven by the OpenAPI document: requests to every documented operation with
 * valid and hostile path ids, query values, bodies and headers, under every kind of credential. For
 * each, the server must not answer 5xx, the status must be documented for the operation, and a JSON
 * body must fit the schema documented for that status. Seeded (FUZZ_SEED to replay a failure; the
 * seed and path of a failure are printed) and bounded in time (FUZZ_SECONDS, default 20; longer runs find more, e.g. FUZZ_SECONDS=300 before a release).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type request from 'supertest';
import { startHarness, type Harness } from '../helpers/api-harness.js';
import { DocumentOracle, type Operation } from '../helpers/openapi-doc.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const SECONDS = Number(process.env.FUZZ_SECONDS ?? 20);

let h: Harness;
let oracle: DocumentOracle;
let creds: Record<string, (r: request.Test) => request.Test>;
let ids: Record<string, string[]>;

before(async () => {
  // Limits high enough that the fuzzer reaches the routes (the limits have their own tests).
  h = await startHarness({ TIMESHARE_ADDRESS_RATE_LIMIT_PER_SECOND: '0', TIMESHARE_BODY_LIMIT: '16kb' });
  oracle = new DocumentOracle((await h.http.get('/v1/openapi.json').expect(200)).body);
  const t = await h.createTenant('fuzzed', { maxActiveJobs: 1000 });
  const nodeKey = await h.admin(h.http.post('/v1/node-keys')).send({ name: 'fuzz' }).expect(201);
  const nodeTok = await h.http.post('/v1/auth/token').send({ apiKey: nodeKey.body.apiKey }).expect(200);
  const node = (r: request.Test) => r.set('Authorization', `Bearer ${nodeTok.body.token}`);
  const registered = await node(h.http.post('/v1/nodes/register'))
    .send({
      name: 'fuzz-node',
      devices: [{ index: 0, kind: 'cpu', memoryBytes: 1 << 30, freeMemoryBytes: 1 << 30 }],
    })
    .expect(200);
  const job = await t
    .as(h.http.post('/v1/jobs'))
    .send({ name: 'fuzz', workflow: { task: { name: 'addition' } } })
    .expect(201);
  creds = {
    none: (r) => r,
    garbage: (r) => r.set('Authorization', 'Bearer x.y.z'),
    admin: h.admin,
    tenant: t.as,
    node,
  };
  // Real ids of each kind, so that requests also get past the 404s.
  ids = {
    id: [t.id, job.body.id, registered.body.id],
    jobId: [job.body.id],
    checkpointId: [randomUUID()],
    keyId: [nodeKey.body.id],
  };
});
after(() => h.close());

const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
});
const hostileText = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.constantFrom(
    '\u0000',
    'a\u0000b',
    '',
    ' ',
    '-1',
    '1e309',
    'NaN',
    '9'.repeat(40),
    '%',
    '\uffff',
    'x'.repeat(300),
  ),
);
const hostileSegment = fc.oneof(
  fc.string({ unit: 'binary' }).map(encodeURIComponent),
  fc.constantFrom('%', '%FF', '%E0%A4%A', '%00', '%2F', '..', '.', 'null', '0', '-1', 'a'.repeat(300)),
);
const numberish = fc.oneof(
  fc.integer({ min: -10, max: 2000 }),
  fc.constantFrom(0, 1, 2147483647, 2147483648, 3000000000, 2 ** 53, 1e300, -1),
  fc.double(),
);
const queryValue = fc.oneof(numberish.map(String), hostileText, printable);

/** Known-good bodies per operation, which the fuzzer sends as they are or with one field hostile. */
const samples: Record<string, Record<string, unknown>[]> = {
  submitJob: [
    { name: 'f', workflow: { task: { name: 'addition' } } },
    {
      name: 'g',
      pool: 'default',
      priority: 'high',
      resources: { devices: 2, maxDevices: 4 },
      workflow: {
        algorithm: 'ppo',
        mode: 'spatial',
        task: { name: 'sorting', minLength: 2, maxLength: 4 },
        steps: 3,
      },
    },
  ],
  createTenant: [{ name: 'fz' }, { name: 'fz2', weight: 2 }],
  createTenantKey: [{ name: 'k' }, {}],
  createNodeKey: [{ name: 'k' }, {}],
  updateTenantQuota: [{ maxActiveJobs: 5, deviceHoursPerMonth: 10 }],
  createToken: [{ apiKey: 'tsk_nope' }],
  registerNode: [
    {
      name: 'n',
      labels: { a: 'b' },
      devices: [{ index: 0, kind: 'cpu', memoryBytes: 1, freeMemoryBytes: 1 }],
    },
  ],
  heartbeatNode: [{ devices: [{ index: 0, freeMemoryBytes: 1 }] }],
  startNodeJob: [{ queueSeq: 0, resumedFromStep: 3 }, { queueSeq: 0 }],
  reportNodeJob: [
    { queueSeq: 0, reportSeq: 1, metrics: [{ step: 1, name: 'loss', value: 0.5 }], deviceSeconds: 1 },
  ],
  recordNodeJobCheckpoint: [
    { queueSeq: 0, reportSeq: 1, step: 1, sizeBytes: 3, sha256: 'ab'.repeat(32), storageKey: 'x/y' },
  ],
  finishNodeJob: [{ queueSeq: 0, outcome: 'failed', error: 'x' }],
};

/** Replaces one top-level or nested field of an object with a hostile value. */
const mutate = (base: Record<string, unknown>) =>
  fc.tuple(fc.nat(), fc.oneof(fc.jsonValue(), hostileText, numberish)).map(([n, v]) => {
    const copy = structuredClone(base);
    const holders: Record<string, unknown>[] = [];
    const walk = (o: unknown) => {
      if (o && typeof o === 'object') {
        holders.push(o as Record<string, unknown>);
        for (const x of Object.values(o)) walk(x);
      }
    };
    walk(copy);
    const holder = holders[n % holders.length]!;
    const keys = [...Object.keys(holder), 'zzz'];
    holder[keys[n % keys.length]!] = v;
    return copy;
  });

function bodyFor(op: Operation) {
  const base = samples[op.op.operationId] ?? [{}];
  return fc.oneof(
    fc.constantFrom(...base),
    fc.constantFrom(...base).chain(mutate),
    fc.jsonValue({ maxDepth: 3 }),
    fc.constant(undefined),
  );
}

function requestFor(op: Operation) {
  const params = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  const queryNames = (op.op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
  return fc.record({
    op: fc.constant(`${op.method} ${op.path}`),
    cred: fc.constantFrom(...Object.keys(creds)),
    path: fc.tuple(
      ...params.map((p) => fc.oneof(fc.constantFrom(...(ids[p] ?? ids.id!)), fc.uuid(), hostileSegment)),
    ),
    query: fc.dictionary(fc.oneof(fc.constantFrom(...queryNames, 'zzz'), printable), queryValue, {
      maxKeys: 3,
    }),
    body: op.op.requestBody ? bodyFor(op) : fc.constant(undefined),
    rawBody: fc.option(fc.constantFrom('{', 'nul', '"\\u0000"', '[]', '{"a":1e999}'), { freq: 8 }),
    headers: fc.dictionary(
      fc.constantFrom('Idempotency-Key', 'Range', 'If-Range', 'Last-Event-ID', 'Content-Type', 'Accept'),
      fc.oneof(
        printable,
        fc.constantFrom('bytes=0-0', 'bytes=-1', 'bytes=5-', 'application/json', 'text/plain'),
      ),
      { maxKeys: 2 },
    ),
  });
}

test('every documented operation answers hostile and valid input as documented, never 5xx', async () => {
  const arbitrary = fc.oneof(...oracle.operations.map(requestFor));
  const byName = new Map(oracle.operations.map((o) => [`${o.method} ${o.path}`, o]));
  let runs = 0;
  const started = performance.now();
  await fc.assert(
    fc.asyncProperty(arbitrary, async (r) => {
      runs++;
      const op = byName.get(r.op)!;
      let i = 0;
      const path = op.path.replace(/\{[^}]+\}/g, () => r.path[i++]!);
      const qs = new URLSearchParams(r.query).toString();
      const url = qs ? `${path}?${qs}` : path;
      let req = creds[r.cred]!(h.http[op.method as 'get'](url));
      for (const [k, v] of Object.entries(r.headers)) {
        // Live event streams end only with their job; they have their own tests.
        if (k === 'Accept' && v.includes('event-stream')) continue;
        req = req.set(k, v);
      }
      // Sent as text, so that a hostile Content-Type header cannot break the client's own encoding.
      const body = r.rawBody ?? (r.body === undefined ? undefined : JSON.stringify(r.body));
      if (body !== undefined) {
        if (!r.headers['Content-Type']) req = req.set('Content-Type', 'application/json');
        req = req.send(body);
      }
      const res = await req;
      assert.ok(
        res.status < 500,
        `${op.method.toUpperCase()} ${url}: ${res.status} ${res.text?.slice(0, 300)}`,
      );
      // A hostile id can land the request on another path (an empty one: `/v1/jobs/` is the list).
      const landed = oracle.templateOf(path);
      if (!landed) {
        assert.ok([400, 401, 404, 429, 431].includes(res.status), `${url}: ${res.status}`);
        assert.equal(typeof res.body?.error?.code, 'string', `${url}: ${res.text?.slice(0, 300)}`);
        return;
      }
      const why = oracle.mismatch(op.method, landed, res.status, res.headers['content-type'], res.body);
      assert.equal(why, null);
    }),
    {
      seed: SEED,
      numRuns: 1_000_000,
      interruptAfterTimeLimit: SECONDS * 1000,
      markInterruptAsFailure: false,
    },
  );
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `fuzz: ${runs} requests in ${seconds.toFixed(1)} s (${(runs / seconds).toFixed(0)}/s), seed ${SEED}`,
  );
  assert.ok(runs > oracle.operations.length * 10, 'enough requests to reach every operation');
});
