/** `timeshare jobs wait` against an API server (no scheduler or worker: the jobs are finished by hand). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useCliFixture } from './cli-fixture.js';
import { runCli } from './run-cli.js';

const cli = useCliFixture('wait', {
  tenant: 'waiter',
  env: ({ h, t }) => ({ TIMESHARE_API_URL: h.api.url, TIMESHARE_API_KEY: t.apiKey }),
});

/** A job of the tenant's that finished at `finishedAt`, long before anyone waits for it. */
async function finishedJob(
  name: string,
  status: 'succeeded' | 'failed',
  finishedAt: string,
): Promise<string> {
  const job = await cli.t
    .as(cli.h.http.post('/v1/jobs'))
    .send({ name, workflow: { task: { name: 'addition' } } })
    .expect(201);
  await cli.h.api.deps.db.pool.query(`UPDATE jobs SET status = $2, finished_at = $3 WHERE id = $1`, [
    job.body.id,
    status,
    finishedAt,
  ]);
  return job.body.id as string;
}

test('jobs wait on a finished job prints when it finished, not when the wait ran', async () => {
  const at = '2021-03-04T05:06:07.089Z';
  const ok = await finishedJob('done-long-ago', 'succeeded', at);
  const r = await runCli(['jobs', 'wait', ok], cli.env);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, `${at}  succeeded\n`);
  assert.match(r.stdout, new RegExp(`finished: ${at}`));

  const failedAt = '2022-11-12T13:14:15.000Z';
  const failed = await finishedJob('failed-long-ago', 'failed', failedAt);
  const f = await runCli(['jobs', 'wait', failed], cli.env);
  assert.equal(f.code, 1, 'a job that did not succeed');
  assert.equal(f.stderr, `${failedAt}  failed\n`);
});

test("jobs wait prints a running job's step as it changes, with its estimated finish", async () => {
  const job = await cli.t
    .as(cli.h.http.post('/v1/jobs'))
    .send({ name: 'underway', workflow: { task: { name: 'addition' }, steps: 20 } })
    .expect(201);
  const id = job.body.id as string;
  // What the reports of a run at step 5 leave on the row, its pace from step 1, 4 s apart.
  await cli.h.api.deps.db.pool.query(
    `UPDATE jobs SET status = 'running', started_at = now(), progress_step = 5, progress_at = now(),
                     pace_step = 1, pace_at = now() - interval '4 seconds' WHERE id = $1`,
    [id],
  );
  const r = await runCli(['jobs', 'wait', id, '--interval', '0.2', '--timeout', '1'], cli.env);
  assert.equal(r.code, 2, 'still running when the wait gave up');
  const lines = r.stderr.trim().split('\n');
  assert.match(lines[0]!, /^\S+ {2}running {2}step 5\/20, estimated finish \S+Z$/);
  assert.equal(lines.filter((l) => / {2}running/.test(l)).length, 1, 'printed once: nothing changed');
});
