/**
 * The default synthetic workload, seeded: four tenants with weights 3/2/1/1 submitting RL jobs as
 * Poisson arrivals over the first hours (one tenant arrives late, in a burst, so reclaim matters),
 * sizes drawn like Philly's but shifted wider (RL runs generation and training on several devices),
 * lengths 30 min – 4 h alone, offered at about twice what the cluster can run so that it saturates.
 * Half the submissions repeat a workload their tenant ran before (a sweep, a resumed project) and
 * carry its profile; the rest are new and start from the planner's prior.
 */
import { GiB, NO_QUOTA, type SimWorkload, type TenantSpec } from '../model.js';
import { Rng } from '../rng.js';
import { rlJob } from './rl-job.js';

export interface SyntheticOptions {
  seed: number;
  nodes?: number;
  /** Offered device-time over what the cluster can deliver during the arrival window. */
  overload?: number;
  arrivalHours?: number;
  recurringShare?: number;
}

const TENANTS: { id: string; weight: number; share: number; from: number; to: number }[] = [
  { id: 'lab-a', weight: 3, share: 0.35, from: 0, to: 1 },
  { id: 'lab-b', weight: 2, share: 0.3, from: 0, to: 1 },
  { id: 'lab-c', weight: 1, share: 0.2, from: 0, to: 1 },
  { id: 'lab-d', weight: 1, share: 0.15, from: 0.5, to: 0.7 },
];

const SIZES = [
  { value: 1, weight: 0.55 },
  { value: 2, weight: 0.2 },
  { value: 4, weight: 0.15 },
  { value: 8, weight: 0.1 },
];

export function syntheticWorkload(o: SyntheticOptions): SimWorkload {
  const rng = new Rng(o.seed);
  const nodes = o.nodes ?? 4;
  const devices = nodes * 8;
  const hours = o.arrivalHours ?? 6;
  const overload = o.overload ?? 2;
  const budget = devices * hours * 3600 * overload;
  const tenants: TenantSpec[] = TENANTS.map((t) => ({
    id: t.id,
    weight: t.weight,
    ...NO_QUOTA,
  }));
  const jobs = [];
  for (const t of TENANTS) {
    let offered = 0;
    let i = 0;
    const from = t.from * hours * 3600;
    const span = (t.to - t.from) * hours * 3600;
    const arrivals: number[] = [];
    const sizes: { devices: number; seconds: number }[] = [];
    while (offered < budget * t.share) {
      const d = rng.pick(SIZES);
      const seconds = Math.min(4 * 3600, Math.max(1800, rng.lognormal(5400, 0.6)));
      sizes.push({ devices: d, seconds });
      offered += d * seconds;
    }
    for (let k = 0; k < sizes.length; k++) arrivals.push(from + rng.next() * span);
    arrivals.sort((a, b) => a - b);
    for (const s of sizes)
      jobs.push(
        rlJob(
          {
            id: `${t.id}-${i}`,
            tenant: t.id,
            arrival: Math.round(arrivals[i++]!),
            devices: s.devices,
            seconds: s.seconds,
            recurring: rng.next() < (o.recurringShare ?? 0.5),
          },
          rng,
        ),
      );
  }
  jobs.sort((a, b) => a.arrival - b.arrival || (a.id < b.id ? -1 : 1));
  return {
    name: `synthetic (seed ${o.seed})`,
    cluster: { nodes, devicesPerNode: 8, deviceMemoryBytes: 80 * GiB, hostMemoryBytes: 2048 * GiB },
    tenants,
    jobs,
  };
}
