/**
 * The minimal placement used until the global scheduler lands: the first node (least loaded first)
 * of the job's pool with enough devices that each run fewer than `maxJobsPerDevice` jobs. Jobs that
 * share a device are time-shared by the device lock. A pure function of a snapshot, so the
 * simulator and tests can call it directly.
 */
import { stageDeviceMap, type Placement } from '../../common/node-protocol/index.js';

export interface DeviceSnapshot {
  index: number;
  memoryBytes: number;
  threads: number;
  /** Jobs placed on this device now. */
  load: number;
}

export interface NodeSnapshot {
  id: string;
  pool: string;
  devices: DeviceSnapshot[];
}

export interface PlacementRequest {
  pool: string;
  devices: number;
  /** The job spec's workflow mode; `spatial` with two or more devices splits generation from training. */
  mode: 'auto' | 'temporal' | 'spatial' | 'hybrid';
}

export type PlacementResult = { ok: true; placement: Placement } | { ok: false; waitReason: 'capacity' };

export function firstFit(
  req: PlacementRequest,
  nodes: NodeSnapshot[],
  maxJobsPerDevice: number,
): PlacementResult {
  const candidates = nodes
    .filter((n) => n.pool === req.pool)
    .map((n) => {
      const usable = n.devices
        .filter((d) => d.load < maxJobsPerDevice)
        .sort((a, b) => a.load - b.load || a.index - b.index);
      const chosen = usable.slice(0, req.devices);
      const load = chosen.reduce((s, d) => s + d.load, 0);
      return { node: n, chosen, load };
    })
    .filter((c) => c.chosen.length === req.devices)
    .sort((a, b) => a.load - b.load || a.node.id.localeCompare(b.node.id));
  const best = candidates[0];
  if (!best) return { ok: false, waitReason: 'capacity' };
  const devices = best.chosen.map((d) => d.index).sort((a, b) => a - b);
  return {
    ok: true,
    placement: {
      nodeId: best.node.id,
      devices,
      ...stageDeviceMap(req.mode === 'spatial' ? 'spatial' : 'temporal', devices),
      threadsPerDevice: Math.min(...best.chosen.map((d) => d.threads)),
      memoryBytes: Math.min(...best.chosen.map((d) => d.memoryBytes)),
    },
  };
}
