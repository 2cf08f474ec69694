/**
 * Builds the scheduler's snapshot from the simulated state, the way production reads it from its
 * database: ready nodes, tenants with quotas and half-life-decayed usage, running jobs with the
 * plans `planJob` makes from their measured profiles, and the queue (a requeued job carries the
 * profile of its earlier runs; a fresh one has none, so the planner's prior applies).
 */
import { planJob } from '../planner/plan-job.js';
import { movesElsewhere, preemptedForOf } from '../core/preempt.js';
import type { NodeState, QueuedJob, RunningJob, Snapshot, TenantState, Workload } from '../core/types.js';
import type { JobRun } from './job-run.js';
import { SIM_DEVICE_THREADS, type ClusterSpec, type SimJobSpec, type TenantSpec } from './model.js';

export const POOL = 'sim';
/** Simulated time 0 as a wall clock for the scheduler (its times are ms since the epoch). */
export const EPOCH_MS = Date.UTC(2026, 0, 1);
export const toMs = (seconds: number) => EPOCH_MS + Math.round(seconds * 1000);
export const fromMs = (ms: number) => (ms - EPOCH_MS) / 1000;

export function simNodes(c: ClusterSpec): NodeState[] {
  return Array.from({ length: c.nodes }, (_, n) => ({
    id: `node-${n}`,
    pool: POOL,
    hostMemoryBytes: c.hostMemoryBytes,
    devices: Array.from({ length: c.devicesPerNode }, (_, index) => ({
      index,
      memoryBytes: c.deviceMemoryBytes,
      // The planner's prior prices a device by its engine threads (model.ts, SIM_DEVICE_THREADS).
      threads: SIM_DEVICE_THREADS,
    })),
  }));
}

export interface SnapshotOptions {
  /** Jobs ask for `auto` (the planner chooses); otherwise `temporal`. */
  planner: boolean;
  deviceMemoryBytes: number;
}

/** The spec's figures a planner sees before profiles (a batch of 64 prompts × 8 samples, 1k tokens). */
export function specWorkload(s: SimJobSpec, planner = false): Workload {
  return {
    mode: planner ? 'auto' : 'temporal',
    maxWeightLag: s.maxWeightLag ?? 0,
    parameters: s.parameters,
    steps: s.steps,
    promptsPerStep: 64,
    groupSize: 8,
    sequenceTokens: 1024,
    ...(s.partialTail === undefined ? {} : { partialTail: s.partialTail }),
  };
}

export interface TenantUsage {
  deviceSeconds: number;
  memoryByteSeconds: number;
  periodDeviceSeconds: number;
}

export function buildSnapshot(
  nodes: NodeState[],
  tenants: readonly TenantSpec[],
  usage: ReadonlyMap<string, TenantUsage>,
  jobs: readonly JobRun[],
  opts: SnapshotOptions = { planner: false, deviceMemoryBytes: Infinity },
): Snapshot {
  const workloadOf = (s: SimJobSpec) => specWorkload(s, opts.planner);
  const active = new Map<string, number>();
  const running: RunningJob[] = [];
  const queued: QueuedJob[] = [];
  for (const j of jobs) {
    const s = j.spec;
    if (j.status === 'running') {
      active.set(s.tenant, (active.get(s.tenant) ?? 0) + j.devices.length);
      running.push({
        id: s.id,
        tenantId: s.tenant,
        pool: POOL,
        priority: s.priority,
        nodeId: j.nodeId,
        devices: j.devices,
        plan: planJob({
          // A running job is costed as it runs: the mode it was placed with.
          workload: {
            ...workloadOf(s),
            mode: j.plan?.mode ?? 'temporal',
            microBatches: j.plan?.microBatches ?? 1,
            partialTail: j.partialTail,
          },
          devices: s.devices,
          maxDevices: s.devices,
          memoryPerDeviceBytes: s.deviceBytes,
          deviceMemoryBytes: opts.deviceMemoryBytes,
          threadsPerDevice: SIM_DEVICE_THREADS,
          profile: j.profile(),
        }),
        placedAt: toMs(j.placedAt),
        runningSince: toMs(j.runStartedAt),
        queuedAt: toMs(j.queuedAt),
        preemptRequestedAt: j.notice === null ? null : toMs(j.notice),
        preemptReason: j.noticeReason,
        returnTo: movesElsewhere(j.noticeReason) ? j.returnTo : null,
        preemptFor: j.noticeFor,
        stepsDone: j.stepsDone,
        steps: s.steps,
        // Re-planning reads what production reads from its events and profiles (the simulator records
        // no `job.plan_fitted`: it is a record for people, not an input).
        ...(opts.planner
          ? {
              replan: {
                workload: workloadOf(s),
                profile: j.profile(),
                threadsPerDevice: SIM_DEVICE_THREADS,
                last: j.lastReplan,
                sincePlaced: j.sincePlaced(),
                fitted: true,
              },
            }
          : {}),
      });
    } else if (j.status === 'queued')
      queued.push({
        id: s.id,
        tenantId: s.tenant,
        pool: POOL,
        priority: s.priority,
        queueSeq: j.queueSeq,
        queuedAt: toMs(j.queuedAt),
        createdAt: toMs(s.arrival),
        devices: s.devices,
        maxDevices: s.devices,
        memoryPerDeviceBytes: s.deviceBytes,
        workload: workloadOf(s),
        stepsDone: j.stepsDone,
        attempts: j.attempts,
        requeueReason: j.requeueReason,
        profile: j.profile(),
        returnTo: j.returnTo,
        returnFor: movesElsewhere(j.noticeReason) ? j.noticeFor : null,
        preemptedFor: preemptedForOf(j.noticeReason, j.noticeFor),
      });
  }
  const tenantStates: TenantState[] = tenants.map((t) => {
    const u = usage.get(t.id);
    return {
      id: t.id,
      weight: t.weight,
      maxConcurrentDevices: t.maxConcurrentDevices,
      maxDevicesPerJob: 1024,
      deviceHoursPerMonth: t.deviceHoursPerMonth,
      periodDeviceSeconds: u?.periodDeviceSeconds ?? 0,
      activeDevices: active.get(t.id) ?? 0,
      usage: (u
        ? { [POOL]: { deviceSeconds: u.deviceSeconds, memoryByteSeconds: u.memoryByteSeconds } }
        : {}) as TenantState['usage'],
    };
  });
  return { nodes, tenants: tenantStates, running, queued };
}
