/**
 * The API down while PostgreSQL is up: the fleet's heartbeats fail (nothing takes them) while the
 * liveness sweep's own statements succeed. Before, the sweep found every live node lost a node
 * timeout into such an outage and requeued each job `node_lost` with an attempt counted (three
 * outages failed every long job for good). Now a node's silence counts only while an API instance
 * is present (common/api-presence.ts): from the start of the unbroken run of presence writes of an
 * instance present now.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type pg from 'pg';
import { ApiPresence } from '../../common/api-presence.js';
import { sweepLostNodes } from '../../scheduler/liveness.js';
import { ControlPlaneClock } from '../../scheduler/liveness-clock.js';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';
import { placeOnNode, registerTestNode } from '../helpers/test-node.js';

let h: Harness;
let acme: TestTenant;
before(async () => {
  h = await startHarness();
  acme = await h.createTenant('acme');
});
after(() => h.close());

const pool = () => h.api.deps.db.pool;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const timeoutMs = 1500;
/** A scheduler that has reached the database at every sweep for a minute. */
function sweeper() {
  const clock = new ControlPlaneClock();
  clock.reached(new Date(Date.now() - 60_000));
  return () => sweepLostNodes({ ...h.api.deps, pool: pool(), timeoutMs, clock });
}
const status = async (id: string) =>
  (await pool().query(`SELECT status FROM nodes WHERE id = $1`, [id])).rows[0].status as string;
const jobStatus = async (id: string) =>
  (await pool().query(`SELECT status FROM jobs WHERE id = $1`, [id])).rows[0].status as string;
const presentRows = async () =>
  (await pool().query(`SELECT instance_id, present_since FROM api_presence ORDER BY instance_id`)).rows as {
    instance_id: string;
    present_since: Date;
  }[];

test('a node silent while no API instance is present is not lost; once one is present for a node timeout, it is', async () => {
  const sweep = sweeper();
  const { as: node, id: nodeId } = await registerTestNode(h, 'cut-off-node');
  const jobId = (
    await acme
      .as(h.http.post('/v1/jobs'))
      .send({ name: 'long', workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body.id as string;
  const run = await placeOnNode(h, nodeId, jobId);
  await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${jobId}/start`))
    .send({ queueSeq: run, resumedFromStep: null })
    .expect(200);

  // The API goes away (PostgreSQL stays up): no heartbeat is taken for 25 s.
  await h.api.presence.close();
  assert.deepEqual(await presentRows(), [], 'a stopped API says it is gone');
  await pool().query(`UPDATE nodes SET last_heartbeat_at = now() - interval '25 seconds' WHERE id = $1`, [
    nodeId,
  ]);
  assert.equal(await sweep(), 0);
  assert.equal(await status(nodeId), 'ready', 'nobody could heartbeat: no API was present');
  assert.equal(await jobStatus(jobId), 'running');

  // An API is back (its own period short, as with a short node timeout): less than a node timeout
  // ago, so still nobody is lost.
  const back = new ApiPresence(pool(), h.api.deps.logger, 100);
  back.start();
  try {
    await sleep(timeoutMs / 2);
    assert.equal(await sweep(), 0);
    assert.equal(await status(nodeId), 'ready', 'present for less than a node timeout');
    assert.equal(await jobStatus(jobId), 'running');

    // The node stays silent while the API is present for the timeout: lost, as before.
    await sleep(timeoutMs / 2 + 300);
    assert.equal(await sweep(), 1);
    assert.equal(await status(nodeId), 'lost');
    assert.equal(await jobStatus(jobId), 'queued');
    const queued = await pool().query(
      `SELECT data->>'reason' AS reason FROM job_events WHERE job_id = $1 AND type = 'job.queued' AND data ? 'reason'`,
      [jobId],
    );
    assert.deepEqual(
      queued.rows.map((r) => r.reason),
      ['node_lost'],
    );
  } finally {
    await back.close();
  }
});

test('an API instance whose database calls fail is not present, and its run starts again once they succeed', async () => {
  let failing = true;
  const flaky = {
    query: (...args: Parameters<pg.Pool['query']>) =>
      failing ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')) : pool().query(...args),
  } as unknown as pg.Pool;
  const api = new ApiPresence(flaky, h.api.deps.logger, 100);
  try {
    assert.equal(await api.beat(), false);
    assert.deepEqual(await presentRows(), [], 'it wrote nothing: not present');
    failing = false;
    assert.equal(await api.beat(), true);
    const first = (await presentRows())[0]!.present_since;
    await sleep(150);
    assert.equal(await api.beat(), true);
    assert.equal((await presentRows())[0]!.present_since.getTime(), first.getTime(), 'an unbroken run');
    // Its writes fail for longer than three periods: not present meanwhile, and a new run after.
    failing = true;
    await sleep(400);
    const stillThere = await pool().query(
      `SELECT last_seen_at >= now() - make_interval(secs => 3 * period_ms / 1000.0) AS present FROM api_presence`,
    );
    assert.equal(stillThere.rows[0].present, false);
    failing = false;
    assert.equal(await api.beat(), true);
    assert.ok((await presentRows())[0]!.present_since.getTime() > first.getTime(), 'a new run');
  } finally {
    failing = false;
    await api.close();
  }
  assert.deepEqual(await presentRows(), []);
});

test('presence of any API instance counts: one present since long ago lets the sweep find a silent node lost', async () => {
  const sweep = sweeper();
  const { id: nodeId } = await registerTestNode(h, 'dead-node');
  const a = new ApiPresence(pool(), h.api.deps.logger, 100);
  const b = new ApiPresence(pool(), h.api.deps.logger, 100);
  try {
    await a.beat();
    await b.beat();
    await pool().query(
      `UPDATE api_presence SET present_since = now() - interval '1 minute' WHERE instance_id = $1`,
      [a.instanceId],
    );
    await pool().query(`UPDATE nodes SET last_heartbeat_at = now() - interval '25 seconds' WHERE id = $1`, [
      nodeId,
    ]);
    assert.equal(await sweep(), 0);
    assert.equal(await status(nodeId), 'lost', 'instance a has been present all along');
  } finally {
    await a.close();
    await b.close();
  }
});
