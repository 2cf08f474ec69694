/**
 * Two schedulers: the leader is SIGKILLed in the middle of a round (decisions made, not committed).
 * The standby takes the lease when it lapses and places every job within 10 s of the death, each
 * exactly once, and every job runs to success.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  eventsOf,
  startCluster,
  steadyJob,
  waitFor,
  waitForStatus,
  type Cluster,
} from '../helpers/cluster.js';
import { startProcess, type Proc } from '../helpers/processes.js';

let c: Cluster;
const schedulers: Proc[] = [];

before(async () => {
  c = await startCluster({ env: { TIMESHARE_LEADER_LEASE_MS: '3000' } });
});
after(async () => {
  for (const s of schedulers) await s.kill('SIGTERM');
  await c.close();
});

const leader = async () =>
  (await c.sql.query(`SELECT holder, epoch FROM scheduler_leases WHERE expires_at > clock_timestamp()`))
    .rows[0] as { holder: string; epoch: string } | undefined;

test(
  'the leader dies mid-round; the standby places every job once within 10 s',
  { timeout: 180_000 },
  async () => {
    await c.scheduler.kill('SIGTERM'); // the cluster's own; this test runs its two itself
    await waitFor('no leader', async () => !(await leader()));
    const dying = startProcess('scheduler/main.ts', { ...c.env, TIMESHARE_FAULT: 'crash_in_round' });
    schedulers.push(dying);
    const first = await waitFor('a leader', leader, 30_000);
    assert.ok(first.holder.includes(`:${dying.child.pid}:`), 'the faulty scheduler leads');
    const standby = startProcess('scheduler/main.ts', c.env);
    schedulers.push(standby);

    const t = await c.h.createTenant('failover');
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push(
        (
          await t
            .as(c.h.http.post('/v1/jobs'))
            .send(steadyJob(`fo-${i}`, 4))
            .expect(201)
        ).body.id,
      );
    await c.startWorker('fo-node', 2);
    assert.equal(await dying.exited, null, `killed by its signal mid-round:\n${dying.output()}`);
    const diedAt = Date.now();

    await waitFor(
      'the standby to place a job',
      async () => (await c.sql.query(`SELECT 1 FROM jobs WHERE status <> 'queued' LIMIT 1`)).rows.length > 0,
      20_000,
    );
    const tookMs = Date.now() - diedAt;
    const now = (await leader())!;
    assert.ok(now.holder.includes(`:${standby.child.pid}:`), 'the standby leads');
    assert.equal(Number(now.epoch), Number(first.epoch) + 1, 'a new epoch');
    assert.ok(tookMs < 10_000, `placed ${tookMs} ms after the leader died`);

    for (const id of ids) {
      const job = await waitForStatus(c, t, id, ['succeeded', 'failed']);
      assert.equal(job.status, 'succeeded', job.error ?? '');
      const placed = (await eventsOf(c, t, id)).filter((e) => e.type === 'job.placed');
      assert.equal(placed.length, 1, `job ${id} placed once`);
      assert.equal(placed[0]!.data.epoch, Number(now.epoch), 'by the new leader');
    }
  },
);
