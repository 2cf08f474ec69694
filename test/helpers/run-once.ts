/**
 * What the tests of a node that lost touch (paused, cut off from the API) check: the job moved to
 * another node, nothing on the old node runs it meanwhile, and it finished once, every committed
 * checkpoint matching its file (two runs writing the same checkpoint directories would break that).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { eventsOf, waitFor, waitForStatus, type Cluster, type Tenantish } from './cluster.js';
import { childCpuTicks } from './processes.js';

export function runningOn(c: Cluster, id: string, nodeName: string) {
  return waitFor(`the job running on ${nodeName}`, async () => {
    const r = await c.sql.query(
      `SELECT j.status, n.name FROM jobs j JOIN nodes n ON n.id = j.node_id WHERE j.id = $1`,
      [id],
    );
    return r.rows[0]?.status === 'running' && r.rows[0].name === nodeName;
  });
}

/** The processes `pid` forked use no CPU for 3 s: whatever lingers there does not run the job. */
export async function childrenIdle(pid: number, what: string): Promise<void> {
  const t0 = childCpuTicks(pid);
  await new Promise((r) => setTimeout(r, 3000));
  const busy = [...childCpuTicks(pid)].map(([child, ticks]) => ticks - (t0.get(child) ?? ticks));
  assert.ok(
    busy.every((ticks) => ticks < 10),
    `a process of the ${what} node still runs the job: ${busy.join(', ')} ticks in 3 s`,
  );
}

/** Succeeded once after its node was found lost, every checkpoint record matching its file. */
export async function finishedOnce(c: Cluster, t: Tenantish, id: string): Promise<void> {
  const job = await waitForStatus(c, t, id, ['succeeded', 'failed', 'cancelled'], 300_000);
  assert.equal(job.status, 'succeeded', job.error ?? '');
  const events = await eventsOf(c, t, id);
  assert.ok(events.some((e) => e.type === 'job.queued' && e.data.reason === 'node_lost'));
  assert.equal(events.filter((e) => e.type === 'job.succeeded').length, 1);
  const records = await c.sql.query(`SELECT step, sha256, storage_key FROM checkpoints WHERE job_id = $1`, [
    id,
  ]);
  for (const r of records.rows) {
    const file = readFileSync(path.join(c.h.config.TIMESHARE_STORAGE_ROOT, r.storage_key));
    assert.equal(createHash('sha256').update(file).digest('hex'), r.sha256, `checkpoint of step ${r.step}`);
  }
}
