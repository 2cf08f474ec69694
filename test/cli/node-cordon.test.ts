/**
 * `timeshare admin nodes cordon <node> [--reason …] [--evict]` and `uncordon <node>`: by id or by
 * name, in words by default and the API's node with --json; `nodes list` shows the cordon; an
 * unknown node is the API's not_found (or the CLI's, for a name).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { registerTestNode } from '../helpers/test-node.js';
import { useCliFixture } from './cli-fixture.js';
import { runCli } from './run-cli.js';

const cli = useCliFixture('node-cordon', {
  env: ({ h }) => ({ TIMESHARE_API_URL: h.api.url, TIMESHARE_ADMIN_KEY: h.adminKey }),
});

const rowOf = async (id: string) =>
  (
    await cli.h.api.deps.db.pool.query(
      `SELECT cordoned_at IS NOT NULL AS cordoned, cordon_reason, cordon_evict FROM nodes WHERE id = $1`,
      [id],
    )
  ).rows[0];

test('cordon by name, drain with a reason, list shows it, uncordon by id; unknown nodes refused', async () => {
  const node = await registerTestNode(cli.h, 'cli-cordoned');
  const plain = await runCli(['admin', 'nodes', 'cordon', 'cli-cordoned'], cli.env);
  assert.equal(plain.code, 0, plain.stderr);
  assert.equal(
    plain.stdout,
    `node cli-cordoned (${node.id}) cordoned: nothing new is placed on it; its jobs keep running (--evict moves them off)\n`,
  );
  assert.deepEqual(await rowOf(node.id), { cordoned: true, cordon_reason: null, cordon_evict: false });

  const drained = await runCli(
    ['--json', 'admin', 'nodes', 'cordon', node.id, '--reason', 'disk replacement', '--evict'],
    cli.env,
  );
  assert.equal(drained.code, 0, drained.stderr);
  const n = JSON.parse(drained.stdout);
  assert.equal(n.id, node.id);
  assert.deepEqual(
    { ...n.cordon, cordonedAt: 'set' },
    { cordonedAt: 'set', reason: 'disk replacement', evict: true },
  );
  assert.deepEqual(await rowOf(node.id), {
    cordoned: true,
    cordon_reason: 'disk replacement',
    cordon_evict: true,
  });
  const words = await runCli(['admin', 'nodes', 'cordon', 'cli-cordoned'], cli.env);
  assert.match(words.stdout, /its jobs checkpoint and resume on other nodes\nreason: disk replacement\n$/);

  const list = await runCli(['admin', 'nodes', 'list'], cli.env);
  assert.equal(list.code, 0, list.stderr);
  const line = list.stdout.split('\n').find((l) => l.includes('cli-cordoned'));
  assert.match(line ?? '', /drain: disk replacement/);

  // The pool's timeline says it before the holds; the --json page carries it on each device.
  const timeline = await runCli(['admin', 'pools', 'timeline', 'default'], cli.env);
  assert.equal(timeline.code, 0, timeline.stderr);
  assert.match(timeline.stdout, /^node cli-cordoned drain: disk replacement since \d{4}-\d\d-\d\dT\S+Z$/m);

  const off = await runCli(['admin', 'nodes', 'uncordon', node.id], cli.env);
  assert.equal(off.code, 0, off.stderr);
  assert.equal(off.stdout, `node cli-cordoned (${node.id}) uncordoned: jobs may be placed on it again\n`);
  assert.deepEqual(await rowOf(node.id), { cordoned: false, cordon_reason: null, cordon_evict: false });
  const json = JSON.parse(
    (await runCli(['--json', 'admin', 'nodes', 'uncordon', 'cli-cordoned'], cli.env)).stdout,
  );
  assert.equal(json.cordon, null, 'again: a no-op');
  const after = await runCli(['admin', 'pools', 'timeline', 'default'], cli.env);
  assert.doesNotMatch(after.stdout, /cli-cordoned/);

  const byName = await runCli(['admin', 'nodes', 'cordon', 'no-such-node'], cli.env);
  assert.equal(byName.code, 1);
  assert.match(byName.stderr, /^error: not_found: no node named no-such-node/m);
  const byId = await runCli(['admin', 'nodes', 'uncordon', '00000000-0000-4000-8000-000000000000'], cli.env);
  assert.equal(byId.code, 1);
  assert.match(byId.stderr, /^error: not_found: /m);
});
