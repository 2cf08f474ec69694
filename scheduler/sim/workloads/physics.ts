/**
 * The physics check's workload: identical one-device jobs, each idle a fraction f of every step,
 * offered far beyond what the cluster can run (every job submitted at time 0), over a fixed
 * horizon. No tail, no randomness: the only thing that differs between policies is whether idle
 * time gets filled, and what the switches cost.
 */
import { GB, GiB, NO_QUOTA, type SimWorkload } from '../model.js';

export const PHYSICS_STEP_SECONDS = 120;

export function physicsWorkload(
  idleFraction: number,
  opts: { nodes?: number; hours?: number; recurring?: boolean } = {},
): SimWorkload {
  const nodes = opts.nodes ?? 2;
  const hours = opts.hours ?? 6;
  const held = PHYSICS_STEP_SECONDS * (1 - idleFraction);
  const steps = 30;
  const devices = nodes * 8;
  // Enough jobs that the queue never drains before the horizon, even at the ideal rate (×2 slack).
  const count = Math.ceil(((2 * devices * hours * 3600) / (steps * PHYSICS_STEP_SECONDS)) * 2) + devices * 2;
  return {
    name: `physics f=${idleFraction}`,
    cluster: { nodes, devicesPerNode: 8, deviceMemoryBytes: 80 * GiB, hostMemoryBytes: 2048 * GiB },
    tenants: [{ id: 'physics', weight: 1, ...NO_QUOTA }],
    horizonSeconds: hours * 3600,
    jobs: Array.from({ length: count }, (_, i) => ({
      id: `p${i}`,
      tenant: 'physics',
      arrival: 0,
      devices: 1,
      priority: 1,
      steps,
      parameters: 0.5e9,
      deviceBytes: 30 * GiB,
      // bf16 weights and fp32 Adam moments of a 0.5B model: 8 GB each way per switch.
      stateBytesPerDevice: 8 * GB,
      generateBytesPerDevice: 8 * GB,
      shape: {
        turns: 1,
        generateSeconds: held * 0.6,
        tailSigma: 0,
        envSeconds: 0,
        rewardSeconds: PHYSICS_STEP_SECONDS * idleFraction,
        trainSeconds: held * 0.35,
        syncSeconds: held * 0.05,
      },
      checkpointEvery: 1e9,
      recurring: opts.recurring ?? true,
    })),
  };
}
