/**
 * Draws one step of a job as a sequence of phases: `held` phases run under the device lock on all
 * the job's devices, the others leave its devices idle (environment latency, reward and verifier
 * time), which is the time another job may fill. Consecutive held phases merge: a job that trains
 * and then syncs weights keeps the lock in between, as the worker does.
 *
 * Generation is drawn at the level of sequences: a turn's 64 completions (lognormal lengths) are
 * decoded on the generator's slots, an eighth of the batch at once on the job's own devices, each
 * freed slot taking the next sequence. The turn ends with its last sequence (`sync`); the slots'
 * work alone (`bulk`, the lengths' sum over the slots) is what a generator streaming on devices of
 * its own spends, the slots freed by finished sequences refilled by the next batch's. On n devices
 * instead of the job's d the bulk scales by d / n; the tail (the stragglers finishing alone) does not.
 */
import { FreeTimes } from './free-times.js';
import type { Rng } from './rng.js';
import type { StepShape } from './model.js';

/**
 * `generate` holds need the weights on the device; `train` holds (training and the weight sync)
 * the whole training state; `checkpoint` writes it out, and when it ends the steps so far are safe.
 */
export type PhaseKind = 'generate' | 'idle' | 'train' | 'checkpoint';

export interface Phase {
  kind: PhaseKind;
  held: boolean;
  seconds: number;
}

/**
 * Sequences per turn, and how many waves of the generator's slots they make on the job's own
 * devices. Eight waves make streaming worth 1.15–1.39× on generation for σ 0.6–1.0, within the up
 * to 44% rollout throughput APRIL measured from refilling the tail (arXiv 2509.18521).
 */
const SEQUENCES = 64;
const WAVES = 8;
/** GRPO groups in a turn's batch (of SEQUENCES / GROUPS samples each, dispatched together). */
export const GROUPS = 8;

/** One turn's generation on the job's own devices, in units of a median completion. */
export interface TurnDraw {
  /** Until the last sequence ends. */
  sync: number;
  /** The slots' work alone (sync less the stragglers' tail). */
  bulk: number;
  /**
   * With partial rollouts: until all but the carried groups have ended (a group ends with its last
   * sample), plus the carried sequences' remaining work spread over the slots, which the next
   * turn does. Between `bulk` and `sync`: a group waits for its longest sample.
   */
  partial: number;
}

/** `carried`: groups of the 8 that partial rollouts leave unfinished (the planner's default quarter: 2). */
export function drawTurnUnits(sigma: number, rng: Rng, carried = 1): TurnDraw {
  if (sigma <= 0) return { sync: 1, bulk: 1, partial: 1 };
  const slots = SEQUENCES / WAVES;
  const free = new FreeTimes();
  free.add(0, slots);
  let sum = 0;
  let end = 0;
  const starts: number[] = [];
  const ends: number[] = [];
  // A group ends with its last sample: samples are dispatched group by group.
  const groupEnds = new Array<number>(GROUPS).fill(0);
  const size = SEQUENCES / GROUPS;
  for (let i = 0; i < SEQUENCES; i++) {
    const length = rng.lognormal(1, sigma);
    sum += length;
    const start = free.take(1);
    const done = start + length;
    starts.push(start);
    ends.push(done);
    end = Math.max(end, done);
    const g = Math.floor(i / size);
    groupEnds[g] = Math.max(groupEnds[g]!, done);
    free.add(done, 1);
  }
  return { sync: end, bulk: sum / slots, partial: partialUnits(starts, ends, groupEnds, slots, carried) };
}

/** When all but `carried` groups have ended, plus what is left of the others over the slots. */
function partialUnits(
  starts: readonly number[],
  ends: readonly number[],
  groupEnds: number[],
  slots: number,
  carried: number,
): number {
  groupEnds.sort((a, b) => a - b);
  const stop = groupEnds[GROUPS - 1 - Math.max(0, Math.min(GROUPS - 1, carried))]!;
  let left = 0;
  for (let i = 0; i < SEQUENCES; i++) if (ends[i]! > stop) left += ends[i]! - Math.max(stop, starts[i]!);
  return stop + left / slots;
}

/**
 * A turn's mean `sync` (so that a turn lasts the shape's `generateSeconds` on average), its
 * occupancy (mean bulk over mean sync: what an earlier run of the job measured) and, carrying
 * `carried` groups, the mean partial-rollout turn over mean sync, in one pass.
 */
export function turnStats(
  sigma: number,
  rng: Rng,
  samples = 200,
  carried = 1,
): { meanUnits: number; occupancy: number; partialOccupancy: number } {
  if (sigma <= 0) return { meanUnits: 1, occupancy: 1, partialOccupancy: 1 };
  let sync = 0;
  let bulk = 0;
  let partial = 0;
  for (let i = 0; i < samples; i++) {
    const u = drawTurnUnits(sigma, rng, carried);
    sync += u.sync;
    bulk += u.bulk;
    partial += u.partial;
  }
  return { meanUnits: sync / samples, occupancy: bulk / sync, partialOccupancy: partial / sync };
}

/** One turn in seconds on the job's own devices. */
export function drawTurn(shape: StepShape, rng: Rng, meanUnits: number, carried = 1): TurnDraw {
  const u = drawTurnUnits(shape.tailSigma, rng, carried);
  const scale = shape.generateSeconds / meanUnits;
  return { sync: u.sync * scale, bulk: u.bulk * scale, partial: u.partial * scale };
}

/** A turn on `n` devices instead of the job's `d`: the bulk spreads, the tail does not. */
export function turnOn(t: TurnDraw, d: number, n: number): TurnDraw {
  const bulk = (t.bulk * d) / n;
  return { sync: bulk + (t.sync - t.bulk), bulk, partial: bulk + (t.partial - t.bulk) };
}

/**
 * A temporal step on `n` of the job's `d` devices: every turn's generation, then training and the
 * sync, all on those devices (on fewer than the spec's, the work spreads over fewer). With partial
 * rollouts (`partialTail` > 0: that share of the batch's groups may be carried) a turn's generation
 * stops once all but the carried groups have ended, and the next turn finishes their remaining
 * work on its slots (`TurnDraw.partial`).
 */
export function drawStep(
  shape: StepShape,
  rng: Rng,
  meanUnits: number,
  d: number,
  n: number,
  partialTail = 0,
): { phases: Phase[]; turns: TurnDraw[] } {
  const carried = Math.floor(partialTail * GROUPS + 1e-9);
  const phases: Phase[] = [];
  const turns: TurnDraw[] = [];
  const push = (kind: PhaseKind, seconds: number) => {
    if (seconds <= 0) return;
    const last = phases[phases.length - 1];
    if (last && last.kind === kind) last.seconds += seconds;
    else phases.push({ kind, held: kind !== 'idle', seconds });
  };
  for (let t = 0; t < shape.turns; t++) {
    const drawn = turnOn(drawTurn(shape, rng, meanUnits, carried), d, n);
    const turn = carried > 0 ? { ...drawn, sync: drawn.partial } : drawn;
    turns.push(turn);
    push('generate', turn.sync);
    push('idle', shape.envSeconds);
  }
  push('idle', shape.rewardSeconds);
  push('train', (shape.trainSeconds * d) / n);
  push('train', (shape.syncSeconds * d) / n);
  return { phases, turns };
}
