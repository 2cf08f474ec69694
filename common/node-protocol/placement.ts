/**
 * Where and how a job runs on a node: the scheduler writes it, the API hands it to the node, the
 * worker executes it. The per-stage device map is decided here and only here (`stageDeviceMap`):
 * the worker never re-derives a split from the mode.
 */
import { z } from '../zod.js';

export const placementRunModes = ['temporal', 'spatial', 'hybrid'] as const;
export type PlacementMode = (typeof placementRunModes)[number];

/** Device indexes (on the placement's node) each stage runs on. */
export const stageDevicesSchema = z
  .object({
    generate: z.array(z.number().int().min(0).max(1023)).min(1),
    train: z.array(z.number().int().min(0).max(1023)).min(1),
  })
  .openapi('StageDevices');
export type StageDevices = z.output<typeof stageDevicesSchema>;

export const placementSchema = z
  .object({
    nodeId: z.uuid(),
    /** Every device the job holds on the node, ascending. */
    devices: z.array(z.number().int().min(0).max(1023)).min(1),
    /**
     * temporal: stages take turns on all devices in one hold; spatial: generation and training on
     * disjoint sets, pipelined; hybrid: two sets that overlap, the shared devices taken in turns.
     */
    mode: z.enum(placementRunModes),
    stages: stageDevicesSchema,
    /** Micro-batches per step the planner chose (absent: the spec's `microBatches`). */
    microBatches: z.number().int().min(1).max(4096).optional(),
    /**
     * Partial rollouts the planner chose (temporal): the share of a step's prompt groups generation
     * may leave unfinished and carry into the next step (absent or 0: off).
     */
    partialTail: z.number().min(0).max(0.5).optional(),
    threadsPerDevice: z.number().int().min(1),
    memoryBytes: z.number().int().min(0),
    /** The scheduler leader's epoch that decided this placement (absent on placements from before it). */
    epoch: z.number().int().min(0).optional(),
  })
  .openapi('Placement');
export type Placement = z.output<typeof placementSchema>;

/**
 * The one rule for splitting a job's devices between its stages. `split` gives how many devices
 * generate and how many train (the plan's figures); without it spatial splits in half. Spatial
 * takes generation from the front and training from the back, disjoint; hybrid generates on every
 * device and trains on the last `train` of them; anything else, or too few devices, is temporal.
 */
export function stageDeviceMap(
  requested: PlacementMode,
  devices: readonly number[],
  split?: { generate: number; train: number },
): { mode: PlacementMode; stages: StageDevices } {
  const sorted = [...devices].sort((a, b) => a - b);
  const n = sorted.length;
  if (requested === 'spatial' && n >= 2) {
    const generate = Math.min(
      n - 1,
      Math.max(
        1,
        split
          ? Math.round((split.generate * n) / Math.max(1, split.generate + split.train))
          : Math.floor(n / 2),
      ),
    );
    return {
      mode: 'spatial',
      stages: { generate: sorted.slice(0, generate), train: sorted.slice(generate) },
    };
  }
  if (requested === 'hybrid' && n >= 2) {
    const train = Math.min(
      n - 1,
      Math.max(1, split ? Math.round((split.train * n) / Math.max(1, split.generate)) : Math.ceil(n / 2)),
    );
    return { mode: 'hybrid', stages: { generate: sorted, train: sorted.slice(n - train) } };
  }
  return { mode: 'temporal', stages: { generate: sorted, train: sorted } };
}

/**
 * A placement stored before the stage map existed: derive its map with the same rule. Reading
 * rows written by an older scheduler must not change how they run.
 */
export function withStageMap(p: Omit<Placement, 'stages'> & { stages?: StageDevices }): Placement {
  if (p.stages) return p as Placement;
  return { ...p, ...stageDeviceMap(p.mode, p.devices) };
}

/**
 * Whether `stages` is a stage map the placement's own mode allows on exactly its devices: what a
 * node's reactive balancer may report after moving a device (spatial: two disjoint non-empty sets
 * covering the devices; hybrid: generation on every device, training on a proper subset of them).
 */
export function isStageMapOf(p: Pick<Placement, 'mode' | 'devices'>, stages: StageDevices): boolean {
  const all = new Set(p.devices);
  const within = (xs: number[]) => xs.every((d) => all.has(d)) && new Set(xs).size === xs.length;
  if (!within(stages.generate) || !within(stages.train)) return false;
  if (p.mode === 'spatial') {
    const gen = new Set(stages.generate);
    return stages.train.every((d) => !gen.has(d)) && gen.size + stages.train.length === all.size;
  }
  if (p.mode === 'hybrid') return stages.generate.length === all.size && stages.train.length < all.size;
  return false;
}
