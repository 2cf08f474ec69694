/**
 * An API outage longer than the node timeout: the daemon's job process stops itself before the
 * scheduler may give the job away (worker-node/supervision.ts). The scheduler still reaches the
 * database, but no API instance is present (common/api-presence.ts), so it counts none of the
 * outage as the node's silence and finds no node lost. Once the API is back, the daemon's beat
 * arrives within the node timeout and its outbox delivers the run's `lost_contact`: the job goes
 * back to the queue using none of its attempts, runs again and succeeds. Before, the scheduler
 * requeued the run `node_lost` (an attempt used; the late `lost_contact` then refunded it, and
 * three such outages of a longer run failed the job for good).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../common/logger.js';
import { startApi } from '../../api/server.js';
import { freePort } from '../helpers/processes.js';
import {
  checkpointSteps,
  eventsOf,
  outboxRecords,
  startCluster,
  steadyJob,
  waitFor,
  waitForStatus,
  type Cluster,
} from '../helpers/cluster.js';

// Enough that the job is still running when its process stops, about 2.5 s into the outage.
const STEPS = 80;

let c: Cluster;
before(async () => {
  // A fixed port, so that the API started again is where the worker looks for it.
  c = await startCluster({ nodeTimeoutMs: 3000, env: { PORT: String(await freePort()) } });
});
after(() => c.close());

test('an outage past the node timeout costs the job none of its attempts', { timeout: 300_000 }, async () => {
  await c.startWorker('cut-off', 1);
  const t = await c.h.createTenant('outlasted');
  const id = (await t.as(c.h.http.post('/v1/jobs')).send(steadyJob('outlasted', STEPS)).expect(201)).body
    .id as string;
  await waitForStatus(c, t, id, ['running']);
  await waitFor('a first checkpoint', async () => (await checkpointSteps(c, t, id)).length > 0);

  await c.h.api.stop();
  await waitFor('the stopped run to wait in the outbox', async () =>
    outboxRecords(c, 'cut-off').some((r) => r.includes('"lost_contact"')),
  );
  // Twice the node timeout without an API: the node is not found lost, the run not requeued.
  await new Promise((r) => setTimeout(r, 6000));
  const held = await c.sql.query(
    `SELECT j.status, n.status AS node FROM jobs j JOIN nodes n ON n.id = j.node_id WHERE j.id = $1`,
    [id],
  );
  assert.deepEqual(held.rows[0], { status: 'running', node: 'ready' });
  c.h.api = await startApi(c.h.config, createLogger('api', c.h.config.LOG_LEVEL));

  const job = await waitForStatus(c, t, id, ['succeeded', 'failed']);
  assert.equal(job.status, 'succeeded', job.error ?? '');
  const events = await eventsOf(c, t, id);
  const queued = events.filter((e) => e.type === 'job.queued' && e.data.reason).map((e) => e.data.reason);
  assert.deepEqual(queued, ['lost_contact']);
  const refunds = events.filter((e) => e.type === 'job.attempt_refunded');
  assert.equal(refunds.length, 0, JSON.stringify(events.map((e) => e.type)));
  const counts = await c.sql.query('SELECT attempts, interruptions FROM jobs WHERE id = $1', [id]);
  assert.deepEqual(counts.rows[0], { attempts: 2, interruptions: 1 }, 'two runs, one of them interrupted');
});
