/**
 * `timeshare submit`: a replayed idempotency key says so (on stderr, the job on stdout unchanged),
 * and a `.json` spec is read by JSON's rules, its syntax errors named with the file and position
 * before any request (YAML took `{"name": "x",}` and the API's refusal was about something else).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { useCliFixture } from './cli-fixture.js';
import { runCli } from './run-cli.js';

const cli = useCliFixture('submit', {
  tenant: 'submitter',
  env: ({ h, t }) => ({ TIMESHARE_API_URL: h.api.url, TIMESHARE_API_KEY: t.apiKey }),
});
const spec = { name: 'once', workflow: { task: { name: 'addition' } } };

test('submit --idempotency-key: a replay says nothing new was submitted, on stderr only', async () => {
  const file = path.join(cli.home, 'once.yaml');
  await writeFile(file, 'name: once\nworkflow:\n  task: { name: addition }\n');
  const key = ['--idempotency-key', 'replayed-key'];
  const first = await runCli(['submit', file, ...key], cli.env);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.stderr, '', 'a first submit has nothing to add');
  const id = /^job (\S+) {2}once /.exec(first.stdout)![1]!;

  const again = await runCli(['submit', file, ...key], cli.env);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, new RegExp(`^job ${id} {2}once `));
  assert.equal(
    again.stderr.trim(),
    'idempotency key replayed-key was used before: nothing new submitted, this is the job it made',
  );
  const json = await runCli(['--json', 'submit', file, ...key], cli.env);
  assert.equal(json.code, 0, json.stderr);
  assert.equal(JSON.parse(json.stdout).id, id, 'stdout: the job object alone');
  assert.match(json.stderr, /was used before: nothing new submitted/);

  const { rows } = await cli.h.api.deps.db.pool.query(
    `SELECT count(*)::int AS n FROM jobs WHERE name = 'once'`,
  );
  assert.equal(rows[0].n, 1);
});

test('a .json spec is JSON: a trailing comma is refused with the file and where, before any request', async () => {
  const file = path.join(cli.home, 'trailing.json');
  await writeFile(file, '{\n  "name": "x",\n}\n');
  // An API that is not there: the refusal must come before the CLI would have called it.
  const env = { ...cli.env, TIMESHARE_API_URL: 'http://127.0.0.1:9' };
  const r = await runCli(['submit', file], env);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /^error: invalid_file: \S*trailing\.json: invalid JSON: .*position 17.*\(line 3, column 1\)$/m,
  );
  const j = await runCli(['--json', 'submit', file], env);
  assert.equal(JSON.parse(j.stdout).error.code, 'invalid_file');

  // Valid JSON submits as before, a byte-order mark included.
  const good = path.join(cli.home, 'good.JSON');
  await writeFile(good, '\uFEFF' + JSON.stringify({ ...spec, name: 'from-json' }));
  const ok = await runCli(['submit', good], cli.env);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /^job \S+ {2}from-json /);
  // A .yaml file is YAML still: the same trailing comma is YAML's to accept.
  const yaml = path.join(cli.home, 'flow.yaml');
  await writeFile(yaml, '{"name": "from-yaml", "workflow": {"task": {"name": "addition"}},}\n');
  assert.equal((await runCli(['submit', yaml], cli.env)).code, 0);
});
