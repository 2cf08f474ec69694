/**
 * Spreading out: a time-share group formed while jobs waited stays together after the queue has
 * drained, its jobs slowed by each other beside devices nobody uses. Once no job of the pool waits
 * for devices, a job on a device that wants more than its whole time (load over 1: its jobs slow
 * down in proportion) moves to free devices, with notice and a checkpoint, like a job compaction
 * moves (reason `spread`), when the time its remaining steps would save pays for the move many
 * times over. The simulator measured hours of every run with devices empty beside crowded ones,
 * but moving them out did not pay on balance, so it is off by default (docs/simulator.md,
 * finding 17; `TIMESHARE_SPREAD_WHEN_IDLE`).
 */
import { deviceLoad, type PoolModel } from './cluster.js';
import { bestFreeDevices, type CompactionMove } from './compact.js';
import type { Policy, RunningJob } from './types.js';
import { ranMinimum } from './min-run.js';

/** A move must save this many times its cost (restart plus the checkpoint's grace at most). */
export const SPREAD_PAYBACK = 10;
/** At most this many moves a round: the next round sees where they went. */
export const MAX_SPREADS_PER_ROUND = 8;

/**
 * The moves to make, most time saved first; each is held in the model on its new devices, and
 * `leaving` gains its job (its partners are weighed without it).
 */
export function findSpreads(
  model: PoolModel,
  running: ReadonlyMap<string, RunningJob>,
  leaving: Set<string>,
  policy: Policy,
  now: number,
): CompactionMove[] {
  const cost = policy.restartSeconds + policy.preemptGraceSeconds;
  const gainOf = (r: RunningJob) => {
    const load = loadAround(model, r, leaving);
    return Math.max(0, r.steps - r.stepsDone) * r.plan.stepSeconds * (Math.max(1, load) - 1);
  };
  const candidates: { r: RunningJob; gain: number }[] = [];
  for (const r of running.values()) {
    if (leaving.has(r.id) || r.preemptRequestedAt !== null || !model.slots.has(r.nodeId)) continue;
    if (!ranMinimum(r, policy, now)) continue;
    const gain = gainOf(r);
    if (gain >= SPREAD_PAYBACK * cost) candidates.push({ r, gain });
  }
  candidates.sort((a, b) => b.gain - a.gain || (a.r.id < b.r.id ? -1 : 1));
  const moves: CompactionMove[] = [];
  for (const { r } of candidates) {
    if (moves.length >= MAX_SPREADS_PER_ROUND) break;
    // A partner that moved this round may have relieved it.
    if (gainOf(r) < SPREAD_PAYBACK * cost) continue;
    // Best fit; a whole free node stays whole for a wider job.
    const to = bestFreeDevices(model, r.plan, r.devices.length, {
      alreadyOn: r.nodeId,
      keepWholeNodes: true,
    });
    if (!to) continue;
    model.add(to.nodeId, to.devices, { jobId: r.id, tenantId: r.tenantId, plan: r.plan });
    leaving.add(r.id);
    moves.push({ jobId: r.id, tenantId: r.tenantId, to });
  }
  return moves;
}

/** The highest load among the job's devices, counting the partners that stay. */
function loadAround(model: PoolModel, r: RunningJob, leaving: ReadonlySet<string>): number {
  let worst = 0;
  for (const s of model.slotsOf(r.nodeId, r.devices)) {
    const staying = s.occupants.filter((o) => o.jobId === r.id || !leaving.has(o.jobId));
    if (staying.length < 2) continue;
    worst = Math.max(worst, deviceLoad(staying.map((o) => o.plan)));
  }
  return worst;
}
