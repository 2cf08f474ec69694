/** A large cluster and queue for bench:scheduler, in memory and in PostgreSQL. */
import type pg from 'pg';
import { planJob } from '../planner/plan-job.js';
import type { NodeState, QueuedJob, RunningJob, Snapshot, TenantState } from '../core/types.js';

const GiB = 1024 ** 3;

/** A seeded PRNG (mulberry32), so every run benchmarks the same cluster. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Size {
  nodes: number;
  devicesPerNode: number;
  tenants: number;
  queued: number;
  /** Share of the devices already held by running jobs. */
  busyShare: number;
}

const workload = (r: () => number) => ({
  mode: 'temporal' as const,
  parameters: [100_000, 400_000, 1_600_000][Math.floor(r() * 3)]!,
  steps: 50 + Math.floor(r() * 500),
  promptsPerStep: 64,
  groupSize: 8,
  sequenceTokens: 10,
});

export function memorySnapshot(size: Size, seed = 1): Snapshot {
  const r = rng(seed);
  const now = Date.UTC(2026, 10, 24);
  const nodes: NodeState[] = Array.from({ length: size.nodes }, (_, i) => ({
    id: `node-${String(i).padStart(5, '0')}`,
    pool: 'default',
    hostMemoryBytes: 512 * GiB,
    devices: Array.from({ length: size.devicesPerNode }, (_, index) => ({
      index,
      memoryBytes: 80 * GiB,
      threads: 1,
    })),
  }));
  const tenants: TenantState[] = Array.from({ length: size.tenants }, (_, i) => ({
    id: `tenant-${i}`,
    weight: 1 + (i % 4),
    maxConcurrentDevices: 100_000,
    maxDevicesPerJob: 8,
    deviceHoursPerMonth: 1e9,
    periodDeviceSeconds: 0,
    activeDevices: 0,
    usage: { default: { deviceSeconds: r() * 1e6, memoryByteSeconds: 0 } },
  }));
  const running: RunningJob[] = [];
  const busy = Math.floor(size.nodes * size.busyShare);
  for (let n = 0; n < busy; n++)
    for (let d = 0; d < size.devicesPerNode; d++) {
      const w = workload(r);
      const t = tenants[Math.floor(r() * tenants.length)]!;
      t.activeDevices++;
      running.push({
        id: `run-${n}-${d}`,
        tenantId: t.id,
        pool: 'default',
        priority: 1,
        nodeId: nodes[n]!.id,
        devices: [d],
        plan: planJob({ workload: w, devices: 1, maxDevices: 1, memoryPerDeviceBytes: null, profile: null }),
        placedAt: now - 3_600_000,
        queuedAt: now - 3_700_000,
        preemptRequestedAt: null,
        stepsDone: Math.floor(r() * w.steps),
        steps: w.steps,
      });
    }
  const queued: QueuedJob[] = Array.from({ length: size.queued }, (_, i) => {
    const devices = [1, 1, 1, 2, 4, 8][Math.floor(r() * 6)]!;
    return {
      id: `q-${i}`,
      tenantId: tenants[Math.floor(r() * tenants.length)]!.id,
      pool: 'default',
      priority: Math.floor(r() * 4),
      queueSeq: 0,
      queuedAt: now - Math.floor(r() * 3_000_000),
      createdAt: now - 3_600_000,
      devices,
      maxDevices: devices,
      memoryPerDeviceBytes: null,
      workload: workload(r),
      stepsDone: 0,
      attempts: 0,
      requeueReason: null,
      profile: null,
    };
  });
  return { nodes, tenants, running, queued };
}

/** The same shape in PostgreSQL: tenants with quotas, a pool of nodes and devices, queued jobs. */
export async function seedDatabase(pool: pg.Pool, size: Size): Promise<void> {
  await pool.query(
    `INSERT INTO tenants (name, weight) SELECT 'bench-' || g, 1 + g % 4 FROM generate_series(1, $1) g`,
    [size.tenants],
  );
  await pool.query(
    `INSERT INTO quotas (tenant_id, max_active_jobs, max_concurrent_devices, max_devices_per_job)
     SELECT id, 1000000, 1000000, 8 FROM tenants`,
  );
  await pool.query(`INSERT INTO pools (name, device_type) VALUES ('default', 'bench')`);
  await pool.query(
    `INSERT INTO nodes (name, pool_id, last_heartbeat_at)
     SELECT 'bench-node-' || g, (SELECT id FROM pools WHERE name = 'default'), now() + interval '1 day'
       FROM generate_series(1, $1) g`,
    [size.nodes],
  );
  await pool.query(
    `INSERT INTO devices (node_id, index, kind, memory_bytes, free_memory_bytes, threads)
     SELECT n.id, d, 'bench', 85899345920, 85899345920, 1 FROM nodes n, generate_series(0, $1 - 1) d`,
    [size.devicesPerNode],
  );
  await pool.query(
    `INSERT INTO jobs (tenant_id, name, pool, devices, priority, spec, queued_at)
     SELECT t.id, 'bench-' || g, 'default', 1, g % 4,
            jsonb_build_object('name', 'bench', 'resources', jsonb_build_object('devices', 1),
              'workflow', jsonb_build_object('steps', 50 + g % 500, 'task', jsonb_build_object('name', 'addition'))),
            now() - make_interval(secs => g % 3000)
       FROM generate_series(1, $1) g
       JOIN LATERAL (SELECT id FROM tenants ORDER BY id OFFSET (g % $2) LIMIT 1) t ON true`,
    [size.queued, size.tenants],
  );
}
