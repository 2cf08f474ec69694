/**
 * The operator commands for routes the CLI had no command for: `admin nodes release`, `admin pools
 * capacity` and `admin jobs preempt`, each readable by default and the API's object with --json.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeCapacity } from '../../common/capacity.js';
import { placeOnNode, registerTestNode } from '../helpers/test-node.js';
import { useCliFixture } from './cli-fixture.js';
import { runCli } from './run-cli.js';

const cli = useCliFixture('admin-operator', {
  tenant: 'operated',
  env: ({ h }) => ({ TIMESHARE_API_URL: h.api.url, TIMESHARE_ADMIN_KEY: h.adminKey }),
});
const unknown = '00000000-0000-4000-8000-000000000000';

test('admin nodes release: the node is lost and unbound; --json is the API answer; revoke-key points to it', async () => {
  const node = await registerTestNode(cli.h, 'released-node');
  const r = await runCli(['admin', 'nodes', 'release', node.id], cli.env);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^node released-node \\(${node.id}\\) released: `));
  const row = await cli.h.api.deps.db.pool.query(`SELECT status::text, key_id FROM nodes WHERE id = $1`, [
    node.id,
  ]);
  assert.deepEqual(row.rows[0], { status: 'lost', key_id: null });

  const json = await runCli(['--json', 'admin', 'nodes', 'release', node.id], cli.env);
  assert.deepEqual(JSON.parse(json.stdout), { id: node.id, name: 'released-node', released: true });
  const missing = await runCli(['admin', 'nodes', 'release', unknown], cli.env);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^error: not_found: /m);

  const help = await runCli(['admin', 'nodes', 'revoke-key', '--help'], cli.env);
  assert.match(help.stdout.replace(/\s+/g, ' '), /`timeshare admin nodes release <node id>`/);
  assert.doesNotMatch(help.stdout, /POST \/v1/);
});

test('admin pools capacity: zeros before any round, then what the round wrote', async () => {
  const before = await runCli(['admin', 'pools', 'capacity', 'default'], cli.env);
  assert.equal(before.code, 0, before.stderr);
  assert.match(before.stdout, /^pool default {2}\(no scheduling round has seen it/);
  assert.match(before.stdout, /wanted devices: 0 /);

  const { redis, names } = cli.h.api.deps;
  const at = Date.parse('2030-01-02T03:04:05.000Z');
  const fields = {
    devices: 4,
    idleDevices: 1,
    busyDevices: 3,
    queuedDevices: 2,
    queuedJobs: 2,
    runningJobs: 3,
    wantedDevices: 5,
  };
  await writeCapacity(redis, names, [{ pool: 'default', ...fields }], at);
  const human = await runCli(['admin', 'pools', 'capacity', 'default'], cli.env);
  assert.equal(
    human.stdout,
    [
      'pool default  (scheduling round at 2030-01-02T03:04:05.000Z)',
      '  wanted devices: 5 (3 busy + 2 wanted by queued jobs)',
      '  devices on ready, uncordoned nodes: 4, 1 idle',
      '  jobs: 3 placed or running, 2 queued',
      '',
    ].join('\n'),
  );
  const json = await runCli(['--json', 'admin', 'pools', 'capacity', 'default'], cli.env);
  assert.deepEqual(JSON.parse(json.stdout), {
    pool: 'default',
    ...fields,
    updatedAt: '2030-01-02T03:04:05.000Z',
  });
});

test('admin jobs preempt: a placed job is asked to checkpoint and requeue; a queued one is a conflict', async () => {
  const submit = async () =>
    (
      await cli.t
        .as(cli.h.http.post('/v1/jobs'))
        .send({ name: 'preempted', workflow: { task: { name: 'addition' } } })
        .expect(201)
    ).body.id as string;
  const node = await registerTestNode(cli.h, 'preempting-node');
  const placed = await submit();
  await placeOnNode(cli.h, node.id, placed);
  const r = await runCli(['admin', 'jobs', 'preempt', placed], cli.env);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^job ${placed} preemption requested: it checkpoints, `));
  const json = await runCli(['--json', 'admin', 'jobs', 'preempt', placed], cli.env);
  assert.deepEqual(JSON.parse(json.stdout), { jobId: placed });

  const queued = await submit();
  const refused = await runCli(['admin', 'jobs', 'preempt', queued], cli.env);
  assert.equal(refused.code, 1);
  assert.match(
    refused.stderr,
    /^error: conflict: job is queued: only a placed or running job can be preempted/m,
  );
});
