/**
 * `timeshare jobs pause|resume|priority` against an API server, with a round of the real scheduler
 * after each (no nodes but one, for a job placed by hand): a paused job leaves the pool's queue and
 * reads as paused; resumed, it is back; each says whether it changed anything; a raised priority
 * moves a job ahead of its tenant's older ones.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultPolicy } from '../../scheduler/core/policy.js';
import { publishQueueViews } from '../helpers/queue-views.js';
import { placeOnNode, registerTestNode } from '../helpers/test-node.js';
import { useCliFixture } from './cli-fixture.js';
import { runCli } from './run-cli.js';

const cli = useCliFixture('job-control', {
  tenant: 'pausing',
  env: ({ h, t }) => ({
    TIMESHARE_API_URL: h.api.url,
    TIMESHARE_API_KEY: t.apiKey,
    TIMESHARE_ADMIN_KEY: h.adminKey,
  }),
});

test('jobs pause takes a job out of the queue until jobs resume', async () => {
  const id = (
    await cli.t
      .as(cli.h.http.post('/v1/jobs'))
      .send({ name: 'held', workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body.id as string;
  const queue = async () => {
    await publishQueueViews(cli.h, defaultPolicy);
    const r = await runCli(['queue', 'default'], cli.env);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };
  assert.match(await queue(), new RegExp(id));

  const paused = await runCli(['jobs', 'pause', id], cli.env);
  assert.equal(paused.code, 0, paused.stderr);
  assert.equal(paused.stdout.trim(), `job ${id} paused (queued)`);
  // Once paused, what each command says of it, asked side by side (none of them changes it; each
  // CLI run is a process of its own, so one after another they took most of this test's time).
  const [pausedQueue, getPaused, json, again] = await Promise.all([
    queue(),
    runCli(['jobs', 'get', id], cli.env),
    runCli(['jobs', 'pause', id, '--json'], cli.env),
    runCli(['jobs', 'pause', id], cli.env),
  ]);
  assert.doesNotMatch(pausedQueue, new RegExp(id), 'a paused job is in no round');
  const got = getPaused.stdout;
  assert.match(got, /waiting for: its tenant to resume it \(paused\)/);
  const pausedAt = JSON.parse(json.stdout).pausedAt as string;
  assert.ok(pausedAt, json.stdout);
  assert.match(got, new RegExp(`^ {2}paused since ${pausedAt}$`, 'm'));
  // Again: the route answers the same job; the CLI says that nothing changed, and since when.
  assert.equal(again.stdout.trim(), `job ${id} was already paused since ${pausedAt} (queued): nothing to do`);

  const resumed = await runCli(['jobs', 'resume', id], cli.env);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.equal(resumed.stdout.trim(), `job ${id} resumed (queued)`);
  // Once resumed, side by side again.
  const [resumedQueue, getResumed, twice, resumedJson] = await Promise.all([
    queue(),
    runCli(['jobs', 'get', id], cli.env),
    runCli(['jobs', 'resume', id], cli.env),
    runCli(['jobs', 'resume', id, '--json'], cli.env),
  ]);
  assert.match(resumedQueue, new RegExp(id));
  assert.doesNotMatch(getResumed.stdout, /paused/);
  assert.equal(twice.code, 0, twice.stderr);
  assert.equal(twice.stdout.trim(), `job ${id} was not paused (queued): nothing to do`);
  assert.equal(JSON.parse(resumedJson.stdout).pausedAt, null, 'the API object as it is');
});

test('a placed job paused is paused too: pause and jobs get say it leaves its devices', async () => {
  const id = (
    await cli.t
      .as(cli.h.http.post('/v1/jobs'))
      .send({ name: 'placed', workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body.id as string;
  const node = await registerTestNode(cli.h, 'pause-node');
  await placeOnNode(cli.h, node.id, id);
  const paused = await runCli(['jobs', 'pause', id], cli.env);
  assert.equal(paused.code, 0, paused.stderr);
  assert.equal(paused.stdout.trim(), `job ${id} paused (placed): it checkpoints and leaves its devices`);
  const got = await runCli(['jobs', 'get', id], cli.env);
  assert.match(got.stdout, /^job \S+ {2}placed {2}placed$/m);
  assert.match(
    got.stdout,
    /^ {2}paused since \S+ \(it checkpoints and leaves its devices, then waits until resumed\)$/m,
  );
});

test("jobs priority raises a job ahead of its tenant's older one, and refuses an unknown level", async () => {
  const submit = async (name: string) =>
    (
      await cli.t
        .as(cli.h.http.post('/v1/jobs'))
        .send({ name, workflow: { task: { name: 'addition' } } })
        .expect(201)
    ).body.id as string;
  const older = await submit('older');
  const newer = await submit('newer');
  const order = async () => {
    await publishQueueViews(cli.h, defaultPolicy);
    const out = (await runCli(['queue', 'default'], cli.env)).stdout;
    return [older, newer].sort((a, b) => out.indexOf(a) - out.indexOf(b));
  };
  assert.deepEqual(await order(), [older, newer]);
  const r = await runCli(['jobs', 'priority', newer, 'urgent'], cli.env);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), `job ${newer} priority urgent`);
  // An unknown level changes nothing: asked beside the order that shows the change.
  const [after, refused] = await Promise.all([order(), runCli(['jobs', 'priority', newer, 'mega'], cli.env)]);
  assert.deepEqual(after, [newer, older]);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /Allowed choices are low, normal, high, urgent/);
});
