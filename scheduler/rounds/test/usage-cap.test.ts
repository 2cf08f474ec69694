// A node may charge a placement no more than its wall time × devices held: the amount charged so far
// is kept on the job's row (a sum over the usage ledger took 253 ms a report at a million rows) and a
// new placement, made by a real round, starts it again.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { recordUsage } from '../../../common/jobs/reports.js';
import { kueueLikePolicy } from '../../core/policy.js';
import { runRound, tenantPoolNode, useRoundDatabase } from './round-db.js';

const db = useRoundDatabase();

it('caps each placement at its wall time × devices, less what it was charged, and starts again at the next', async () => {
  const pool = db.pool();
  const at = await tenantPoolNode(pool);
  await pool.query(`UPDATE nodes SET last_heartbeat_at = now() WHERE id = $1`, [at.nodeId]);
  await pool.query(
    `INSERT INTO devices (node_id, index, kind, memory_bytes, free_memory_bytes)
     SELECT $1, i, 'cpu', 16e9, 16e9 FROM generate_series(0, 1) i`,
    [at.nodeId],
  );
  const id = (
    await pool.query(
      `INSERT INTO jobs (tenant_id, name, spec, status, pool, devices) VALUES ($1, 'capped', $2, 'queued', $3, 2) RETURNING id`,
      [
        at.tenantId,
        { resources: { devices: 2 }, workflow: { mode: 'temporal', steps: 100, task: { name: 'addition' } } },
        at.pool,
      ],
    )
  ).rows[0].id as string;
  const charged = async () =>
    (
      await pool.query(
        `SELECT device_seconds::float8 AS total, placement_device_seconds::float8 AS placement,
                (SELECT sum(device_seconds)::float8 FROM usage_ledger WHERE job_id = $1) AS ledger
           FROM jobs WHERE id = $1`,
        [id],
      )
    ).rows[0] as { total: number; placement: number; ledger: number };
  const placeFor = async (seconds: number) => {
    assert.deepEqual(
      (await runRound(pool, kueueLikePolicy)).d.place.map((p) => p.jobId),
      [id],
    );
    await pool.query(`UPDATE jobs SET placed_at = now() - make_interval(secs => $2) WHERE id = $1`, [
      id,
      seconds,
    ]);
  };

  // Placed 10 s ago on 2 devices: at most about 20 device-seconds, however the reports ask.
  await placeFor(10);
  assert.equal(await recordUsage(pool, id, 12), 12);
  const second = await recordUsage(pool, id, 1e6);
  assert.ok(second > 7.9 && second < 8.5, `the rest of the bound: ${second}`);
  assert.ok((await recordUsage(pool, id, 5)) < 0.5, 'nothing left but the time since');
  const first = await charged();
  assert.ok(Math.abs(first.placement - first.total) < 1e-9 && Math.abs(first.ledger - first.total) < 1e-9);

  // Requeued and placed again: the new placement has its own bound.
  await pool.query(
    `UPDATE jobs SET status = 'queued', node_id = NULL, placement = NULL, queue_seq = queue_seq + 1 WHERE id = $1`,
    [id],
  );
  await pool.query(`UPDATE quotas SET active_devices = 0 WHERE tenant_id = $1`, [at.tenantId]);
  await placeFor(5);
  assert.equal((await charged()).placement, 0, 'a placement starts at nothing charged');
  const again = await recordUsage(pool, id, 1e6);
  assert.ok(again > 9.9 && again < 10.5, `5 s on 2 devices: ${again}`);
  const after = await charged();
  assert.ok(Math.abs(after.total - (first.total + again)) < 1e-9, 'the job keeps its total');
  assert.ok(Math.abs(after.ledger - after.total) < 1e-9, 'the ledger agrees');
});
