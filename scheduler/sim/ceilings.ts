/**
 * What a workload's jobs leave to gain, at most: the idle share of their steps (the holes
 * time-sharing fills) and generation's stragglers' tail (what partial rollouts cut, for the jobs
 * that allow weight lag). Computed from the jobs' step shapes alone, device-time weighted (each
 * job's devices × steps), switches and queueing excluded, so each figure is what one mechanism is
 * worth if every device were kept busy with nothing lost: a yardstick for the measured ratios, not
 * a promise. An exclusive packer also leaves devices idle behind its queue's head, which no figure
 * here counts; and a cut tail can let two jobs pair under the group-load bound that could not, which
 * the measured ratio may show and this does not.
 */
import { DEFAULT_PARTIAL_TAIL } from '../planner/plan-job.js';
import type { SimWorkload, StepShape } from './model.js';
import { Rng } from './rng.js';
import { drawTurnUnits, GROUPS } from './step.js';

export interface Ceilings {
  /** Share of a step off the devices (environment latency, reward and verifier time). */
  idleShare: number;
  /** Share of the held time in generation's tail: the stragglers finishing after the slots' work. */
  tailShare: number;
  /** Share of the held time partial rollouts recover, for the jobs that allow weight lag. */
  carriedShare: number;
  /** The planner over temporal-only: held ÷ (held − recovered), the jobs that allow lag alone. */
  carry: number;
  /** The same if every job's tail could be cut as theirs is (on-policy jobs included). */
  carryAll: number;
  /** Timeshare over a packer that leaves no device idle: step ÷ (held − recovered). */
  fillAndCarry: number;
}

/** Mean units of one turn (sync: until its last sequence; bulk; partial), by σ. */
interface TurnMeans {
  sync: number;
  bulk: number;
  partial: number;
}

const SIGMA_STEP = 0.05;
const TURNS_PER_POINT = 2000;
const meansAt = new Map<number, TurnMeans>();

/** Means of many drawn turns at grid point `i` (σ = i × SIGMA_STEP), each point its own seed. */
function gridMeans(i: number, carried: number): TurnMeans {
  const key = i * 16 + carried;
  let m = meansAt.get(key);
  if (!m) {
    const rng = new Rng(0x7a11 + key);
    let sync = 0;
    let bulk = 0;
    let partial = 0;
    for (let k = 0; k < TURNS_PER_POINT; k++) {
      const u = drawTurnUnits(i * SIGMA_STEP, rng, carried);
      sync += u.sync;
      bulk += u.bulk;
      partial += u.partial;
    }
    m = { sync: sync / TURNS_PER_POINT, bulk: bulk / TURNS_PER_POINT, partial: partial / TURNS_PER_POINT };
    meansAt.set(key, m);
  }
  return m;
}

/** Shares of a turn's mean length in the tail and recovered by carrying `carried` groups, at σ. */
export function turnShares(sigma: number, carried: number): { tail: number; recovered: number } {
  if (sigma <= 0) return { tail: 0, recovered: 0 };
  // Linear between grid points: the shares move smoothly with σ, and a workload draws σ per job.
  const x = sigma / SIGMA_STEP;
  const lo = Math.floor(x);
  const t = x - lo;
  const share = (m: TurnMeans) => ({ tail: 1 - m.bulk / m.sync, recovered: 1 - m.partial / m.sync });
  const a = share(gridMeans(lo, carried));
  if (t === 0) return a;
  const b = share(gridMeans(lo + 1, carried));
  return { tail: a.tail + (b.tail - a.tail) * t, recovered: a.recovered + (b.recovered - a.recovered) * t };
}

export function workloadCeilings(w: SimWorkload, partialTail = DEFAULT_PARTIAL_TAIL): Ceilings {
  const carried = Math.floor(partialTail * GROUPS + 1e-9);
  let held = 0;
  let step = 0;
  let tail = 0;
  let recoveredAll = 0;
  let recovered = 0;
  for (const j of w.jobs) {
    const weight = j.devices * j.steps;
    const s: StepShape = j.shape;
    const h = s.turns * s.generateSeconds + s.trainSeconds + s.syncSeconds;
    const generating = s.turns * s.generateSeconds;
    const shares = turnShares(s.tailSigma, carried);
    held += h * weight;
    step += (h + s.turns * s.envSeconds + s.rewardSeconds) * weight;
    tail += generating * shares.tail * weight;
    recoveredAll += generating * shares.recovered * weight;
    if ((j.maxWeightLag ?? 0) > 0) recovered += generating * shares.recovered * weight;
  }
  if (held <= 0)
    return { idleShare: 0, tailShare: 0, carriedShare: 0, carry: 1, carryAll: 1, fillAndCarry: 1 };
  return {
    idleShare: 1 - held / step,
    tailShare: tail / held,
    carriedShare: recovered / held,
    carry: held / (held - recovered),
    carryAll: held / (held - recoveredAll),
    fillAndCarry: step / (held - recovered),
  };
}
