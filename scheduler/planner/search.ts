/**
 * Plan search over a workflow's stage chain (generate → reward → … → train → sync): RLinf's
 * Algorithm 1. A sub-chain on n devices either runs alone (one stage), or is cut in two and the
 * parts run *temporally* (both on all n devices, taking turns, paying the switch) or *spatially*
 * (n1 and n − n1 devices, pipelined micro-batch by micro-batch). Results are memoised per
 * (sub-chain, device count), bottom-up, so each is computed once per granularity.
 *
 * Every result carries two figures: its latency (one micro-batch through it) and its interval (the
 * time between micro-batches in steady state, the bottleneck). A step of m micro-batches costs the
 * pipeline formula of DESIGN §4, `T = T_critical + (m − 1) · T_bottleneck`, or, when consecutive
 * steps overlap (a generator may run ahead by a weight lag of L steps), `max(T_critical / (1 + L), m · T_bottleneck)`:
 * L + 1 steps are in flight, so the critical path bounds a step only through its share of them.
 * A stage on devices of its own streams: the slots its finished sequences free are refilled by the
 * next micro-batch, so its steady-state interval is its streamed cost (its tail hidden) while one
 * micro-batch's latency keeps the tail (`SearchCosts.streamed`).
 *
 * The best split of n devices between two parts is where the faster-with-more-devices left part
 * meets the slower-with-fewer right part: a binary search for the crossing and a small window
 * around it (a full scan for small n), which keeps 4,096 devices fast.
 */

export type CutKind = 'temporal' | 'spatial';

export interface SearchCosts {
  /** Seconds of one call of stage `stage` (index in the chain) on `batch` sequences over `devices`, its hold included. */
  call(stage: number, batch: number, devices: number): number;
  /** Extra seconds once per micro-batch when parts [i..k] and [k+1..j] take turns on the same devices. */
  temporalCut?(k: number, devices: number): number;
  /** Extra seconds once per step when the chain is cut spatially after stage k (e.g. a weight sync). */
  spatialCut?(k: number, devices: number): number;
  /**
   * Seconds one call adds in steady state when its stage has devices of its own and the next
   * micro-batch fills the slots its finished sequences free (a generation's straggler tail hidden);
   * absent: `call`. Used only for the intervals of spatial cuts: taking turns refills nothing.
   */
  streamed?(stage: number, batch: number, devices: number): number;
}

export interface SearchInput {
  stages: readonly string[];
  /** Devices available. */
  devices: number;
  /** Sequences per step. */
  batch: number;
  /** Micro-batch counts to try (each divides the step's batch). */
  granularities: readonly number[];
  /** Which cuts the search may use (an explicit mode restricts it). */
  cuts: readonly CutKind[];
  /** Consecutive steps overlap (a bounded weight lag lets generation run ahead). */
  overlapSteps: boolean;
  /** Steps a generator may run ahead when steps overlap (default 1). */
  weightLag?: number;
  costs: SearchCosts;
}

/** One node of the chosen plan. */
export type PlanTree =
  | { kind: 'stage'; stage: string; devices: number }
  | { kind: CutKind; devices: number; left: PlanTree; right: PlanTree; leftDevices: number };

export interface SearchResult {
  stepSeconds: number;
  microBatches: number;
  /** Devices the plan uses (≤ the devices available: more would not make it faster). */
  devices: number;
  mode: 'temporal' | 'spatial' | 'hybrid';
  /** Per stage, the device offsets (0-based within the job's devices) it runs on. */
  stageDevices: Record<string, number[]>;
  latencySeconds: number;
  intervalSeconds: number;
  tree: PlanTree;
}

const LEAF = 0;
const TEMPORAL = 1;
const SPATIAL = 2;
const FEWER = 3;
/** Split points tried on each side of the crossing, and below which every split is tried. */
const WINDOW = 3;
const FULL_SCAN_BELOW = 48;

interface Table {
  latency: Float64Array;
  interval: Float64Array;
  /** The interval when the sub-plan's devices stream (its own, refilled): what a spatial cut reads. */
  stream: Float64Array;
  objective: Float64Array;
  kind: Int8Array;
  cut: Int16Array;
  leftDevices: Int32Array;
}

function newTable(size: number): Table {
  return {
    latency: new Float64Array(size),
    interval: new Float64Array(size),
    stream: new Float64Array(size),
    objective: new Float64Array(size),
    kind: new Int8Array(size),
    cut: new Int16Array(size),
    leftDevices: new Int32Array(size),
  };
}

function resetTable(t: Table): void {
  t.latency.fill(Infinity);
  t.interval.fill(Infinity);
  t.stream.fill(Infinity);
  t.objective.fill(Infinity);
  t.kind.fill(-1);
  t.cut.fill(0);
  t.leftDevices.fill(0);
}

/** Searches every granularity and returns the fastest plan, or null when none fits (too few devices). */
export function searchPlan(input: SearchInput): SearchResult | null {
  let best: SearchResult | null = null;
  // One table per sub-chain, reused by every granularity: a search on few devices is mostly
  // allocation otherwise (8 devices, 5 stages: 15 tables × 7 arrays for each of 7 granularities).
  const S = input.stages.length;
  if (S === 0 || !(input.devices >= 1)) return null;
  const tables: Table[] = [];
  for (let k = 0; k < S * S; k++) tables.push(newTable(input.devices + 1));
  for (const m of input.granularities) {
    if (m < 1 || input.batch % m !== 0) continue;
    const r = searchAt(input, m, tables);
    if (r && (!best || r.stepSeconds < best.stepSeconds - 1e-12)) best = r;
  }
  return best;
}

/** Keeps the offer if its step is the table's best for n devices so far. */
function offer(
  t: Table,
  n: number,
  objective: number,
  latency: number,
  interval: number,
  stream: number,
  kind: number,
  cut: number,
  left: number,
): void {
  if (objective < t.objective[n]! - 1e-15) {
    t.objective[n] = objective;
    t.latency[n] = latency;
    t.interval[n] = interval;
    t.stream[n] = stream;
    t.kind[n] = kind;
    t.cut[n] = cut;
    t.leftDevices[n] = left;
  }
}

function searchAt(input: SearchInput, m: number, tables: Table[]): SearchResult | null {
  const S = input.stages.length;
  const N = input.devices;
  if (S === 0 || N < 1) return null;
  const allowTemporal = input.cuts.includes('temporal');
  const allowSpatial = input.cuts.includes('spatial');
  const batch = input.batch / m;
  const inFlight = 1 + Math.max(1, input.weightLag ?? 1);
  const overlap = input.overlapSteps;
  const stepOf = (latency: number, interval: number) =>
    overlap ? Math.max(latency / inFlight, m * interval) : latency + (m - 1) * interval;
  const table = (i: number, j: number) => tables[i * S + j]!;

  for (let len = 1; len <= S; len++) {
    for (let i = 0; i + len - 1 < S; i++) {
      const j = i + len - 1;
      const t = table(i, j);
      resetTable(t);
      for (let n = 1; n <= N; n++) {
        if (len === 1) {
          const c = input.costs.call(i, batch, n);
          offer(t, n, stepOf(c, c), c, c, input.costs.streamed?.(i, batch, n) ?? c, LEAF, 0, 0);
        } else {
          for (let k = i; k < j; k++) {
            const L = table(i, k);
            const R = table(k + 1, j);
            if (allowTemporal && L.objective[n]! < Infinity && R.objective[n]! < Infinity) {
              const sw = input.costs.temporalCut?.(k, n) ?? 0;
              const interval = L.interval[n]! + R.interval[n]! + sw;
              const latency = L.latency[n]! + R.latency[n]! + sw;
              offer(t, n, stepOf(latency, interval), latency, interval, interval, TEMPORAL, k, n);
            }
            if (allowSpatial && n >= 2) {
              const extra = input.costs.spatialCut?.(k, n) ?? 0;
              // Every split for small n, else a window around where the parts' objectives cross.
              const c = n <= FULL_SCAN_BELOW ? 0 : crossing(L.objective, R.objective, n);
              const from = c === 0 ? 1 : Math.max(1, c - WINDOW);
              const to = c === 0 ? n - 1 : Math.min(n - 1, c + WINDOW);
              for (let n1 = from; n1 <= to; n1++) {
                const n2 = n - n1;
                if (L.objective[n1]! === Infinity || R.objective[n2]! === Infinity) continue;
                const interval = Math.max(L.stream[n1]!, R.stream[n2]!);
                const latency = L.latency[n1]! + R.latency[n2]! + extra;
                offer(t, n, stepOf(latency, interval), latency, interval, interval, SPATIAL, k, n1);
              }
            }
          }
        }
        // Using fewer of the devices is always allowed: more devices never make a plan slower.
        if (n > 1 && t.objective[n - 1]! < t.objective[n]! - 1e-15) {
          t.objective[n] = t.objective[n - 1]!;
          t.latency[n] = t.latency[n - 1]!;
          t.interval[n] = t.interval[n - 1]!;
          t.stream[n] = t.stream[n - 1]!;
          t.kind[n] = FEWER;
        }
      }
    }
  }
  const top = table(0, S - 1);
  if (top.objective[N] === Infinity) return null;
  const used = { count: 0 };
  const stageDevices: Record<string, number[]> = {};
  const kinds = new Set<CutKind>();
  const tree = rebuild(input.stages, table, 0, S - 1, N, 0, stageDevices, kinds, used);
  return {
    stepSeconds: top.objective[N]!,
    microBatches: m,
    devices: used.count,
    mode: kinds.size === 2 ? 'hybrid' : kinds.has('spatial') ? 'spatial' : 'temporal',
    stageDevices,
    latencySeconds: top.latency[N]!,
    intervalSeconds: top.interval[N]!,
    tree,
  };
}

/**
 * Where a split of n devices between two parts is best: the left part's n1 (the right gets n − n1).
 * The left's objective falls as n1 grows and the right's rises, so the best split sits near where
 * they cross; the search tries a small window around it.
 */
function crossing(left: Float64Array, right: Float64Array, n: number): number {
  let lo = 1;
  let hi = n - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (left[mid]! > right[n - mid]!) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function rebuild(
  stages: readonly string[],
  table: (i: number, j: number) => Table,
  i: number,
  j: number,
  n: number,
  offset: number,
  stageDevices: Record<string, number[]>,
  kinds: Set<CutKind>,
  used: { count: number },
): PlanTree {
  const t = table(i, j);
  let devices = n;
  while (t.kind[devices] === FEWER) devices--;
  const kind = t.kind[devices];
  if (kind === LEAF) {
    const offsets = Array.from({ length: devices }, (_, d) => offset + d);
    stageDevices[stages[i]!] = offsets;
    used.count = Math.max(used.count, offset + devices);
    return { kind: 'stage', stage: stages[i]!, devices };
  }
  const k = t.cut[devices]!;
  if (kind === TEMPORAL) {
    kinds.add('temporal');
    const left = rebuild(stages, table, i, k, devices, offset, stageDevices, kinds, used);
    const right = rebuild(stages, table, k + 1, j, devices, offset, stageDevices, kinds, used);
    return { kind: 'temporal', devices, left, right, leftDevices: devices };
  }
  kinds.add('spatial');
  const n1 = t.leftDevices[devices]!;
  const left = rebuild(stages, table, i, k, n1, offset, stageDevices, kinds, used);
  const right = rebuild(stages, table, k + 1, j, devices - n1, offset + n1, stageDevices, kinds, used);
  return { kind: 'spatial', devices, left, right, leftDevices: n1 };
}
