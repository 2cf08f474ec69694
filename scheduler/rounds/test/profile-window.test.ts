// The cost model's samples as the round reads them from PostgreSQL (through the leader's profile
// cache) are the ones profile-summary.ts computes from the same rows: warm-up left out, calls past 3×
// the median left out, and each stage shape fitted from its most recent PROFILE_WINDOW_STEPS steps;
// generation's slot occupancy averaged over the calls the mean keeps; calls stopped early for partial
// rollouts a shape of their own.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { PROFILE_WINDOW_STEPS, stageSamples, type ProfileRow } from '../../planner/profile-summary.js';
import { readSnapshot } from '../read-snapshot.js';
import { autoJobSpec, tenantPoolNode, useRoundDatabase } from './round-db.js';

const db = useRoundDatabase();

it('reads each stage shape from its most recent steps, as stageSamples computes them', async () => {
  const pool = db.pool();
  const { tenantId, pool: poolName, nodeId } = await tenantPoolNode(pool);
  const spec = autoJobSpec(4);
  // Requeued after a run: a queued job carries its profile into the round.
  const j = await pool.query(
    `INSERT INTO jobs (tenant_id, name, spec, status, pool, devices, attempts, requeue_reason)
     VALUES ($1, 'j', $2, 'queued', $3, 4, 1, 'preempted') RETURNING id`,
    [tenantId, spec, poolName],
  );
  const id = j.rows[0].id as string;
  // Steps 1–30 on 2 devices, 31–60 on 4; generation slows from step 45 (longer completions); one
  // training call stalls (a checkpoint), and a spatial-like step makes two generation calls.
  const rows: ProfileRow[] = [];
  for (let step = 1; step <= 60; step++) {
    const devices = step <= 30 ? 2 : 4;
    const gen = (step >= 45 ? 2 : 1) * (devices === 2 ? 1 : 0.6);
    const calls = step % 7 === 0 ? 2 : 1;
    // From step 51 on 4 devices the job runs with partial rollouts: shorter calls, less tail left.
    const partial = step > 50;
    for (let c = 0; c < calls; c++)
      rows.push({
        stage: 'generate',
        step,
        seconds: (partial ? 0.8 : 1) * gen + c * 0.01,
        batch: 512,
        devices,
        peakBytes: 1e6,
        onloadSeconds: 0.02,
        offloadSeconds: 0.01,
        // Longer completions, a longer tail: the slots are busy less of the call.
        occupancy: partial ? 0.9 : step >= 45 ? 0.6 : 0.8,
        partialTail: partial ? 0.125 : null,
      });
    rows.push({
      stage: 'train',
      step,
      seconds: step === 58 ? 30 : 3 / devices,
      batch: 512,
      devices,
      peakBytes: 1e6,
      onloadSeconds: 0.05,
      offloadSeconds: 0.05,
    });
  }
  for (const r of rows)
    await pool.query(
      `INSERT INTO stage_profiles (job_id, node_id, stage, step, seconds, batch, devices, peak_bytes, onload_seconds, offload_seconds, occupancy, partial_tail)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        id,
        nodeId,
        r.stage,
        r.step,
        r.seconds,
        r.batch,
        r.devices,
        r.peakBytes,
        r.onloadSeconds,
        r.offloadSeconds,
        r.occupancy ?? null,
        r.partialTail ?? null,
      ],
    );

  const read = await readSnapshot(pool, 60_000);
  const queued = read.snapshot.queued.find((q) => q.id === id)!;
  const key = (s: { stage: string; devices: number; batch: number; partial?: boolean }) =>
    `${s.stage}|${s.devices}|${s.batch}|${s.partial === true}`;
  const fromSql = [...queued.profile!.stages!].sort((a, b) => key(a).localeCompare(key(b)));
  const expected = stageSamples(rows).sort((a, b) => key(a).localeCompare(key(b)));
  assert.deepEqual(
    fromSql.map((s) => key(s)),
    expected.map((s) => key(s)),
  );
  for (const [i, s] of fromSql.entries()) {
    const e = expected[i]!;
    assert.equal(s.count, e.count, key(s));
    assert.ok(
      Math.abs(s.computeSeconds - e.computeSeconds) < 1e-9,
      `${key(s)}: ${s.computeSeconds} vs ${e.computeSeconds}`,
    );
    assert.ok(Math.abs(s.switchSeconds - e.switchSeconds) < 1e-9, key(s));
    assert.equal(s.occupancy === undefined, e.occupancy === undefined, key(s));
    if (e.occupancy !== undefined) assert.ok(Math.abs(s.occupancy! - e.occupancy) < 1e-9, key(s));
  }
  // The window, as figures: 4-device generation run to its end over steps 31–50 is fitted from its
  // last 16 (35–50: 12 calls at occupancy 0.8, 7 after the slowdown at 0.6, the second calls of 35,
  // 42 and 49 among them); the calls stopped early (steps 51–60, a second call at 56: 0.8 of the
  // 1.2 s pace, less 0.03 s of switching) are a shape of their own.
  const gen4 = fromSql.find((s) => s.stage === 'generate' && s.devices === 4 && !s.partial)!;
  assert.equal(gen4.count, PROFILE_WINDOW_STEPS + 3);
  const stopped = fromSql.find((s) => s.stage === 'generate' && s.devices === 4 && s.partial)!;
  assert.equal(stopped.count, 11);
  assert.ok(
    Math.abs(stopped.computeSeconds - (0.96 - 0.03 + 0.01 / 11)) < 1e-9,
    String(stopped.computeSeconds),
  );
  assert.ok(Math.abs(stopped.occupancy! - 0.9) < 1e-9, String(stopped.occupancy));
  assert.ok(Math.abs(gen4.occupancy! - (12 * 0.8 + 7 * 0.6) / 19) < 1e-9, String(gen4.occupancy));
  // On 2 devices (steps 3–30, before the slowdown): no tail change yet; training reports none.
  assert.ok(
    Math.abs(fromSql.find((s) => s.stage === 'generate' && s.devices === 2)!.occupancy! - 0.8) < 1e-9,
  );
  assert.equal(fromSql.find((s) => s.stage === 'train')!.occupancy, undefined);
});
