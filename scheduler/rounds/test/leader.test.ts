// Leader election and fencing against a real PostgreSQL: one leader at a time, epochs grow on
// takeover, and a deposed leader's decisions are refused by the database itself.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyDecisions, DeposedError } from '../apply-decisions.js';
import { acquireLease, currentLeader, releaseLease } from '../leader.js';
import type { Decisions } from '../../core/types.js';
import { tenantPoolNode, useRoundDatabase } from './round-db.js';

const db = useRoundDatabase();

const lapse = () =>
  db.pool().query(`UPDATE scheduler_leases SET expires_at = clock_timestamp() - interval '1 s'`);

async function queuedJob(): Promise<{ id: string; tenantId: string; nodeId: string }> {
  const pool = db.pool();
  const { tenantId, nodeId } = await tenantPoolNode(pool);
  const j = await pool.query(`INSERT INTO jobs (tenant_id, name, spec) VALUES ($1, 'j', '{}') RETURNING id`, [
    tenantId,
  ]);
  return { id: j.rows[0].id, tenantId, nodeId };
}

const placing = (j: { id: string; tenantId: string; nodeId: string }): Decisions => ({
  place: [
    {
      jobId: j.id,
      tenantId: j.tenantId,
      queueSeq: 0,
      nodeId: j.nodeId,
      devices: [0],
      mode: 'temporal',
      stages: { generate: [0], train: [0] },
      threadsPerDevice: 1,
      memoryBytes: 1,
      plan: {
        devicesMin: 1,
        devicesMax: 1,
        mode: 'temporal',
        stepSeconds: 1,
        busyFraction: 0.5,
        switchSeconds: 0,
        deviceBytes: 1,
        hostBytes: 1,
        confidence: 0,
        microBatches: 1,
        generateDevices: 1,
        trainDevices: 1,
        predictedStepSeconds: 1,
        partialTail: 0,
      },
      sharedWith: 0,
    },
  ],
  preempt: [],
  withdraw: [],
  takeBack: [],
  queue: [],
  shares: [],
  replan: [],
});
const noExtra = { reasons: [], usage: [], graceSeconds: 30 };

describe('scheduler leader lease', () => {
  it('admits one holder at a time and bumps the epoch on takeover only', async () => {
    const pool = db.pool();
    const a = await acquireLease(pool, 'a', 5000);
    assert.ok(a);
    assert.equal((await acquireLease(pool, 'a', 5000))!.epoch, a.epoch, 'renewal keeps the epoch');
    assert.equal(await acquireLease(pool, 'b', 5000), null, 'b waits while a is live');
    await lapse();
    const b = await acquireLease(pool, 'b', 5000);
    assert.equal(b!.epoch, a.epoch + 1);
    assert.equal((await currentLeader(pool))!.holder, 'b');
    await releaseLease(pool, 'b');
    assert.equal(await currentLeader(pool), null, 'a clean shutdown hands over at once');
  });

  it("refuses a deposed leader's decisions in the database, and accepts the new leader's", async () => {
    const pool = db.pool();
    await lapse();
    const old = (await acquireLease(pool, 'old', 5000))!;
    const job = await queuedJob();
    await lapse();
    const fresh = (await acquireLease(pool, 'new', 5000))!;
    await assert.rejects(
      applyDecisions(pool, { holder: 'old', epoch: old.epoch }, placing(job), noExtra),
      DeposedError,
    );
    // Even a write that skips the lease check is refused by the trigger.
    await assert.rejects(
      pool.query(`UPDATE jobs SET status = 'placed', sched_epoch = $2 WHERE id = $1`, [job.id, old.epoch]),
      (err: { code?: string }) => err.code === 'TSF01',
    );
    await assert.rejects(
      pool.query(`UPDATE jobs SET status = 'placed' WHERE id = $1`, [job.id]),
      (err: { code?: string }) => err.code === 'TSF01',
      'a placement without an epoch is refused too',
    );
    const status = await pool.query(`SELECT status FROM jobs WHERE id = $1`, [job.id]);
    assert.equal(status.rows[0].status, 'queued', 'nothing half-written');
    const applied = await applyDecisions(pool, { holder: 'new', epoch: fresh.epoch }, placing(job), noExtra);
    assert.equal(applied.placed, 1);
    const row = await pool.query(`SELECT status, sched_epoch, placed_at FROM jobs WHERE id = $1`, [job.id]);
    assert.equal(row.rows[0].status, 'placed');
    assert.equal(Number(row.rows[0].sched_epoch), fresh.epoch, 'the epoch is stored with the decision');
    assert.ok(row.rows[0].placed_at);
    // The same placement again is a no-op (the row left `queued`): never placed twice.
    const again = await applyDecisions(pool, { holder: 'new', epoch: fresh.epoch }, placing(job), noExtra);
    assert.equal(again.placed, 0);
  });
});
