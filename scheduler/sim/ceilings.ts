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
import { stepFigures, type SimWorkload } from './model.js';
import { Rng } from './rng.js';
import { GROUPS, turnStats } from './step.js';

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

const SIGMA_STEP = 0.05;
const TURNS_PER_POINT = 2000;
const sharesAt = new Map<number, { tail: number; recovered: number }>();

/** The shares at grid point `i` (σ = i × SIGMA_STEP), from many drawn turns, each point its own seed. */
function gridShares(i: number, carried: number): { tail: number; recovered: number } {
  const key = i * 16 + carried;
  let m = sharesAt.get(key);
  if (!m) {
    const t = turnStats(i * SIGMA_STEP, new Rng(0x7a11 + key), TURNS_PER_POINT, carried);
    m = { tail: 1 - t.occupancy, recovered: 1 - t.partialOccupancy };
    sharesAt.set(key, m);
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
  const a = gridShares(lo, carried);
  if (t === 0) return a;
  const b = gridShares(lo + 1, carried);
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
    const s = j.shape;
    const f = stepFigures(s);
    const generating = s.turns * s.generateSeconds;
    const shares = turnShares(s.tailSigma, carried);
    held += f.held * weight;
    step += f.step * weight;
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
