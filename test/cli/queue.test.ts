/**
 * `timeshare queue <pool>` against an API server, after one round of the real scheduler (no nodes:
 * every job waits for capacity): each job's priority is named as the job commands name it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kueueLikePolicy } from '../../scheduler/core/policy.js';
import { publishQueueViews } from '../helpers/queue-views.js';
import { useCliFixture } from './cli-fixture.js';
import { runCli } from './run-cli.js';

const cli = useCliFixture('queue', {
  tenant: 'queued',
  env: ({ h, t }) => ({
    TIMESHARE_API_URL: h.api.url,
    TIMESHARE_API_KEY: t.apiKey,
    TIMESHARE_ADMIN_KEY: h.adminKey,
  }),
});

test('queue <pool> names each priority as `jobs get` does, and each tenant by its name', async () => {
  const ids: Record<string, string> = {};
  for (const priority of ['low', 'urgent']) {
    const job = await cli.t
      .as(cli.h.http.post('/v1/jobs'))
      .send({ name: `${priority}-one`, priority, workflow: { task: { name: 'addition' } } })
      .expect(201);
    ids[priority] = job.body.id;
  }
  await publishQueueViews(cli.h, kueueLikePolicy);

  const r = await runCli(['queue', 'default'], cli.env);
  assert.equal(r.code, 0, r.stderr);
  const header = r.stdout.split('\n')[1]!.split('│');
  const column = header.findIndex((c) => c.trim() === 'priority');
  const tenantColumn = header.findIndex((c) => c.trim() === 'tenant');
  for (const [priority, id] of Object.entries(ids)) {
    const row = r.stdout.split('\n').find((l) => l.includes(id));
    assert.ok(row, r.stdout);
    assert.equal(row.split('│')[column]!.trim(), priority);
    assert.equal(row.split('│')[tenantColumn]!.trim(), 'queued');
    assert.match((await runCli(['jobs', 'get', id], cli.env)).stdout, new RegExp(`priority ${priority},`));
  }
  assert.match(r.stdout, /2 queued in default/);
});
