/**
 * Where and how a job runs on a node: the scheduler writes it, the API hands it to the node, the
 * worker executes it. The per-stage device map is decided here and only here (`stageDeviceMap`):
 * the worker never re-derives a split from the mode.
 */
import { z } from '../zod.js';

export const placementRunModes = ['temporal', 'spatial'] as const;
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
    /** temporal: stages take turns on all devices; spatial: generation and training on disjoint sets. */
    mode: z.enum(placementRunModes),
    stages: stageDevicesSchema,
    threadsPerDevice: z.number().int().min(1),
    memoryBytes: z.number().int().min(0),
    /** The scheduler leader's epoch that decided this placement (absent on placements from before it). */
    epoch: z.number().int().min(0).optional(),
  })
  .openapi('Placement');
export type Placement = z.output<typeof placementSchema>;

/**
 * The one rule for splitting a job's devices between its stages. Spatial needs two devices or more:
 * the first half (rounded down) generates, the rest trains; otherwise every stage uses every device.
 */
export function stageDeviceMap(
  requested: 'temporal' | 'spatial',
  devices: readonly number[],
): { mode: PlacementMode; stages: StageDevices } {
  const sorted = [...devices].sort((a, b) => a - b);
  if (requested === 'spatial' && sorted.length >= 2) {
    const half = Math.floor(sorted.length / 2);
    return { mode: 'spatial', stages: { generate: sorted.slice(0, half), train: sorted.slice(half) } };
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
