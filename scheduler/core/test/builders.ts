/** Fluent fixtures for schedule() tests (Kueue's MakeWorkload style). */
import type { JobPlan, NodeState, QueuedJob, RunningJob, Snapshot, TenantState, Workload } from '../types.js';

export const T0 = Date.UTC(2026, 10, 24, 12, 0, 0);
const GiB = 1024 ** 3;

export const workload = (over: Partial<Workload> = {}): Workload => ({
  mode: 'temporal',
  parameters: 400_000,
  steps: 100,
  promptsPerStep: 64,
  groupSize: 8,
  sequenceTokens: 10,
  ...over,
});

/** A plan with round figures: 10 s steps, busy 60%, 0.2 s of switches, 1 GiB per device. */
export const plan = (over: Partial<JobPlan> = {}): JobPlan => ({
  devicesMin: 1,
  devicesMax: 1,
  mode: 'temporal',
  stepSeconds: 10,
  busyFraction: 0.6,
  switchSeconds: 0.2,
  deviceBytes: GiB,
  hostBytes: GiB,
  confidence: 1,
  microBatches: 1,
  generateDevices: over.devicesMin ?? 1,
  trainDevices: over.devicesMin ?? 1,
  predictedStepSeconds: 8,
  partialTail: 0,
  ...over,
});

export const node = (id: string, devices = 8, over: Partial<NodeState> = {}): NodeState => ({
  id,
  pool: 'default',
  hostMemoryBytes: 256 * GiB,
  devices: Array.from({ length: devices }, (_, index) => ({ index, memoryBytes: 16 * GiB, threads: 2 })),
  ...over,
});

export const tenant = (id: string, over: Partial<TenantState> = {}): TenantState => ({
  id,
  weight: 1,
  maxConcurrentDevices: 1000,
  maxDevicesPerJob: 64,
  deviceHoursPerMonth: 1e6,
  periodDeviceSeconds: 0,
  activeDevices: 0,
  usage: {},
  ...over,
});

let seq = 0;
export const queued = (id: string, tenantId: string, over: Partial<QueuedJob> = {}): QueuedJob => ({
  id,
  tenantId,
  pool: 'default',
  priority: 1,
  queueSeq: 0,
  queuedAt: T0 - 60_000 + seq++,
  createdAt: T0 - 60_000,
  devices: 1,
  maxDevices: 1,
  memoryPerDeviceBytes: null,
  workload: workload(),
  stepsDone: 0,
  attempts: 0,
  requeueReason: null,
  profile: { stepSeconds: 10, busySeconds: 6.2, switchSeconds: 0.2, peakBytes: GiB, samples: 10 },
  ...over,
});

export const running = (
  id: string,
  tenantId: string,
  nodeId: string,
  devices: number[],
  over: Partial<RunningJob> = {},
): RunningJob => ({
  id,
  tenantId,
  pool: 'default',
  priority: 1,
  nodeId,
  devices,
  plan: plan({ devicesMin: devices.length, devicesMax: devices.length }),
  placedAt: T0 - 3_600_000,
  queuedAt: T0 - 3_700_000,
  preemptRequestedAt: null,
  stepsDone: 50,
  steps: 100,
  ...over,
});

/** Fills in tenants' active devices from their running jobs. */
export function snapshot(s: Snapshot): Snapshot {
  const active = new Map<string, number>();
  for (const r of s.running) active.set(r.tenantId, (active.get(r.tenantId) ?? 0) + r.devices.length);
  return {
    ...s,
    tenants: s.tenants.map((t) => ({ ...t, activeDevices: active.get(t.id) ?? t.activeDevices })),
  };
}

/** A seeded generator (Park–Miller) for the randomized tests: the same pools every run. */
export function seeded(seed: number): { rand: () => number; pick: (n: number) => number } {
  let s = seed;
  const rand = () => (s = (s * 48271) % 2147483647) / 2147483647;
  return { rand, pick: (n) => Math.floor(rand() * n) };
}
