/**
 * Reads what a round decides on with a few set-based queries (never one per job): live nodes and
 * their devices, tenants with quotas and decayed usage, jobs holding devices, every queued job, and
 * the recent stage profiles of the jobs that have run (profile-cache.ts).
 */
import type pg from 'pg';
import { modelParameters } from '../planner/plan-job.js';
import type {
  NodeDevices,
  NodeState,
  QueuedJob,
  RunningJob,
  Snapshot,
  TenantState,
  Workload,
} from '../core/types.js';
import { planJob } from '../planner/plan-job.js';
import { MOVE_REASONS, movesElsewhere, preemptedForOf } from '../core/preempt.js';
import {
  decisionEventTypes,
  replanEventTypes,
  type ReplanInput,
  type ReplanKind,
} from '../planner/replan.js';
import { ProfileCache } from './profile-cache.js';

interface WorkflowJson {
  mode?: Workload['mode'];
  model?: { preset?: string; layers?: number; dModel?: number };
  task?: { name?: string; digits?: number; maxLength?: number };
  steps?: number;
  promptsPerStep?: number;
  groupSize?: number;
  microBatches?: number;
  maxWeightLag?: number;
  partialTail?: number;
}
interface ResourcesJson {
  devices?: number;
  maxDevices?: number;
  memoryPerDeviceMiB?: number;
}

/** Tokens of one sequence (prompt and completion) for the built-in tasks. */
function sequenceTokens(task: WorkflowJson['task']): number {
  if (task?.name === 'addition') return 3 * (task.digits ?? 2) + 4;
  return 2 * (task?.maxLength ?? 6) + 2;
}

export function workloadOf(wf: WorkflowJson): Workload {
  return {
    mode: wf.mode ?? 'auto',
    parameters: modelParameters(wf.model ?? {}),
    steps: wf.steps ?? 100,
    promptsPerStep: wf.promptsPerStep ?? 64,
    groupSize: wf.groupSize ?? 8,
    sequenceTokens: sequenceTokens(wf.task),
    microBatches: wf.microBatches ?? 1,
    maxWeightLag: wf.maxWeightLag ?? 1,
    ...(wf.partialTail === undefined ? {} : { partialTail: wf.partialTail }),
  };
}

export interface SnapshotRead {
  snapshot: Snapshot;
  /** Decayed usage rows as read, with when each was last updated (ms), keyed `tenant|pool`. */
  usageRows: Map<string, { deviceSeconds: number; memoryByteSeconds: number; updatedAt: number }>;
  /** Wait reasons stored on queued rows, so a round writes only the ones that change. */
  storedReasons: Map<string, string | null>;
  /** The database's clock at the read (ms): the round's `now`. */
  now: number;
}

/**
 * `profiles`: the leader's cache of its jobs' recent profiles, kept between rounds; without one
 * every profiled job's window is read whole.
 */
export async function readSnapshot(
  pool: pg.Pool,
  heartbeatTimeoutMs: number,
  profiles: ProfileCache = new ProfileCache(),
): Promise<SnapshotRead> {
  const [clock, nodeRows, tenantRows, usageRows, runningRows, queuedRows] = await Promise.all([
    pool.query(`SELECT (extract(epoch from clock_timestamp()) * 1000)::float8 AS now`),
    pool.query(
      `SELECT n.id, p.name AS pool, n.host_memory_bytes, n.cordoned_at IS NOT NULL AS cordoned, n.cordon_evict,
              d.index, d.memory_bytes, d.threads
         FROM nodes n JOIN pools p ON p.id = n.pool_id JOIN devices d ON d.node_id = n.id
        WHERE n.status = 'ready' AND n.last_heartbeat_at > now() - make_interval(secs => $1::float8 / 1000)
        ORDER BY n.id, d.index`,
      [heartbeatTimeoutMs],
    ),
    pool.query(
      `SELECT t.id, t.weight, q.max_concurrent_devices, q.max_devices_per_job, q.device_hours_per_month, q.active_devices,
              CASE WHEN q.period_start < usage_period_start() THEN 0 ELSE q.period_device_seconds END AS period_seconds
         FROM tenants t JOIN quotas q ON q.tenant_id = t.id`,
    ),
    pool.query(`SELECT tenant_id, pool, device_seconds, memory_byte_seconds, updated_at FROM tenant_usage`),
    pool.query(
      `SELECT id, tenant_id, pool, priority, node_id, placement, placed_at, run_started_at, queued_at, preempt_requested_at,
              preempt_reason, updated_at, progress_step, paused_at IS NOT NULL AS paused,
              spec->'workflow' AS wf, spec->'resources' AS res
         FROM jobs WHERE status IN ('placed', 'running') AND node_id IS NOT NULL`,
    ),
    pool.query(
      `SELECT id, tenant_id, pool, priority, queue_seq, queued_at, created_at, attempts, interruptions, requeue_reason, wait_reason,
              spec->'workflow' AS wf, spec->'resources' AS res
         FROM jobs WHERE status = 'queued' AND paused_at IS NULL`,
    ),
  ]);
  const now = Number(clock.rows[0].now);

  const nodes = new Map<string, NodeState>();
  for (const r of nodeRows.rows) {
    let n = nodes.get(r.id);
    if (!n)
      nodes.set(
        r.id,
        (n = {
          id: r.id,
          pool: r.pool,
          hostMemoryBytes: r.host_memory_bytes === null ? Infinity : Number(r.host_memory_bytes),
          devices: [],
          // Only when set: a round without cordoned nodes reads as it did.
          ...(r.cordoned ? { cordoned: true, evict: r.cordon_evict === true } : {}),
        }),
      );
    n.devices.push({ index: r.index, memoryBytes: Number(r.memory_bytes), threads: r.threads });
  }

  const usage = new Map<string, { deviceSeconds: number; memoryByteSeconds: number; updatedAt: number }>();
  const byTenant = new Map<string, TenantState['usage']>();
  for (const r of usageRows.rows) {
    const u = { deviceSeconds: Number(r.device_seconds), memoryByteSeconds: Number(r.memory_byte_seconds) };
    usage.set(`${r.tenant_id}|${r.pool}`, { ...u, updatedAt: new Date(r.updated_at).getTime() });
    const t = byTenant.get(r.tenant_id) ?? {};
    t[r.pool] = u;
    byTenant.set(r.tenant_id, t);
  }
  const tenants: TenantState[] = tenantRows.rows.map((r) => ({
    id: r.id,
    weight: Number(r.weight),
    maxConcurrentDevices: r.max_concurrent_devices,
    maxDevicesPerJob: r.max_devices_per_job,
    deviceHoursPerMonth: Number(r.device_hours_per_month),
    periodDeviceSeconds: Number(r.period_seconds),
    activeDevices: r.active_devices,
    usage: byTenant.get(r.id) ?? {},
  }));

  // Where resumed jobs resume, and the recent profiles of the jobs that have run (the leader's cache).
  const runningIds = runningRows.rows.map((r) => r.id as string);
  const resumedIds = queuedRows.rows.filter((r) => r.attempts > 0).map((r) => r.id as string);
  // Running jobs with when they were placed (their steps since measure a move).
  const placedAt = new Map<string, number | null>(
    runningRows.rows.map((r) => [r.id as string, r.placed_at ? new Date(r.placed_at).getTime() : null]),
  );
  const preemptedIds = queuedRows.rows
    .filter((r) => r.requeue_reason === 'preempted')
    .map((r) => r.id as string);
  const noticedIds = runningRows.rows.filter((r) => r.preempt_requested_at).map((r) => r.id as string);
  const [checkpointed, histories, replanRows, fittedRows, returnRows, noticeRows] = await Promise.all([
    // Each resumed job's last checkpoint, from the end of its (job_id, step) range: an aggregate
    // read all of them (58 ms at 1,000 jobs of 500 checkpoints, 7 ms so).
    resumedIds.length
      ? pool.query(
          `SELECT i.job_id, c.step FROM unnest($1::uuid[]) AS i(job_id)
             CROSS JOIN LATERAL (SELECT step FROM checkpoints WHERE job_id = i.job_id ORDER BY step DESC LIMIT 1) c`,
          [resumedIds],
        )
      : { rows: [] },
    profiles.read(pool, placedAt, resumedIds),
    // Re-planning: each running job's latest decision.
    runningIds.length
      ? pool.query(
          `SELECT DISTINCT ON (job_id) job_id, type, data,
                  (extract(epoch from created_at) * 1000)::float8 AS at
             FROM job_events
            WHERE job_id = ANY($1::uuid[]) AND type = ANY($2::text[])
            ORDER BY job_id, id DESC`,
          [runningIds, decisionEventTypes],
        )
      : { rows: [] },
    // Jobs whose prediction for their current placement is recorded already (`job.plan_fitted`).
    runningIds.length
      ? pool.query(
          `SELECT DISTINCT e.job_id FROM job_events e JOIN jobs j ON j.id = e.job_id
            WHERE e.job_id = ANY($1::uuid[]) AND e.type = $2 AND e.created_at >= j.placed_at`,
          [runningIds, replanEventTypes.fitted],
        )
      : { rows: [] },
    // Jobs that left their devices to change plan in place get the devices of their last
    // placement back; jobs moved elsewhere get those chosen for them (their notice's `moveTo`); for
    // the others, the job their preemption made room for.
    preemptedIds.length
      ? pool.query(
          `SELECT j.id, pe.data->>'reason' AS reason,
                    CASE WHEN pe.data->>'reason' = 'replan' THEN pl.data->'placement'
                         WHEN pe.data->>'reason' = ANY($2::text[]) THEN pg.data->'moveTo' END AS placement,
                    CASE WHEN pe.data->>'reason' <> 'replan' THEN pg.data->>'forJobId' END AS for_job
             FROM jobs j
             CROSS JOIN LATERAL (SELECT id, data FROM job_events
                                  WHERE job_id = j.id AND type = 'job.preempted' ORDER BY id DESC LIMIT 1) pe
             LEFT JOIN LATERAL (SELECT data FROM job_events
                                  WHERE job_id = j.id AND type = 'job.placed' ORDER BY id DESC LIMIT 1) pl ON true
             LEFT JOIN LATERAL (SELECT data FROM job_events
                                  WHERE job_id = j.id AND type = 'job.preempting' ORDER BY id DESC LIMIT 1) pg ON true
            WHERE j.id = ANY($1::uuid[])
              AND (pe.data->>'reason' IN ('replan', 'reclaim', 'aging', 'priority', 'shrink')
                   OR pe.data->>'reason' = ANY($2::text[]))
              -- Resumed since: it entered the queue anew, with no devices kept for it and no claim.
              AND NOT EXISTS (SELECT 1 FROM job_events r
                               WHERE r.job_id = j.id AND r.type = 'job.resumed' AND r.id > pe.id)`,
          [preemptedIds, MOVE_REASONS],
        )
      : { rows: [] },
    // Running jobs under notice: the job it frees their devices for, and where a job moved by
    // compaction goes (nobody takes those devices meanwhile).
    noticedIds.length
      ? pool.query(
          `SELECT DISTINCT ON (job_id) job_id, data->>'forJobId' AS for_job, data->'moveTo' AS move_to
               FROM job_events
              WHERE job_id = ANY($1::uuid[]) AND type = 'job.preempting'
              ORDER BY job_id, id DESC`,
          [noticedIds],
        )
      : { rows: [] },
  ]);
  const nodeDevices = (p: { nodeId?: string; devices?: number[] } | null): NodeDevices | null =>
    p?.nodeId && Array.isArray(p.devices) ? { nodeId: p.nodeId, devices: p.devices } : null;
  const returnTo = new Map<string, NodeDevices>();
  const returnFor = new Map<string, string>();
  const preemptedFor = new Map<string, string>();
  for (const r of returnRows.rows) {
    const to = nodeDevices(r.placement);
    if (to) returnTo.set(r.id, to);
    if (to && r.for_job) returnFor.set(r.id, r.for_job);
    const forJob = preemptedForOf(r.reason, r.for_job);
    if (forJob) preemptedFor.set(r.id, forJob);
  }
  const notices = new Map<string, { for: string | null; moveTo: NodeDevices | null }>();
  for (const r of noticeRows.rows)
    notices.set(r.job_id, { for: r.for_job ?? null, moveTo: nodeDevices(r.move_to) });
  const fitted = new Set(fittedRows.rows.map((r) => r.job_id as string));
  const kindOf = Object.fromEntries(Object.entries(replanEventTypes).map(([k, t]) => [t, k as ReplanKind]));
  const lastReplan = new Map<string, NonNullable<ReplanInput['last']>>();
  for (const r of replanRows.rows)
    lastReplan.set(r.job_id, {
      kind: kindOf[r.type]!,
      at: Number(r.at),
      predictedStepSeconds: Number(r.data?.predictedStepSeconds ?? 0),
      beforeStepSeconds: Number(r.data?.beforeStepSeconds ?? 0),
    });
  const stepsDone = new Map<string, number>();
  // A running job's step is on its row (each report moves it; a resumed run starts at its checkpoint's).
  for (const r of runningRows.rows)
    if (r.progress_step !== null) stepsDone.set(r.id, Number(r.progress_step));
  for (const r of checkpointed.rows) stepsDone.set(r.job_id, Number(r.step));
  const running: RunningJob[] = runningRows.rows.map((r) => {
    const wf = (r.wf ?? {}) as WorkflowJson;
    const res = (r.res ?? {}) as ResourcesJson;
    const devices = ((r.placement?.devices as number[] | undefined) ?? []).slice();
    const profile = histories.get(r.id)?.profile ?? null;
    // The split it runs at: the placement's stage map, which the worker's reactive balancer may
    // have changed since (the API records a `job.rebalanced` move in the placement).
    const stages = r.placement?.stages as { generate?: number[]; train?: number[] } | undefined;
    const split =
      stages?.generate?.length && stages.train?.length
        ? { generate: stages.generate.length, train: stages.train.length }
        : undefined;
    return {
      id: r.id,
      tenantId: r.tenant_id,
      pool: r.pool,
      priority: r.priority,
      nodeId: r.node_id,
      devices,
      minDevices: res.devices ?? devices.length,
      // A running job is costed as it runs: its placement's mode, split and micro-batches.
      plan: planJob({
        ...(split ? { split } : {}),
        workload: {
          ...workloadOf(wf),
          mode: (r.placement?.mode as Workload['mode'] | undefined) ?? 'temporal',
          microBatches: (r.placement?.microBatches as number | undefined) ?? wf.microBatches ?? 1,
          partialTail: (r.placement?.partialTail as number | undefined) ?? 0,
        },
        threadsPerDevice: (r.placement?.threadsPerDevice as number | undefined) ?? 1,
        devices: Math.max(1, devices.length),
        maxDevices: Math.max(1, devices.length),
        memoryPerDeviceBytes: res.memoryPerDeviceMiB ? res.memoryPerDeviceMiB * 2 ** 20 : null,
        profile,
      }),
      placedAt: new Date(r.placed_at ?? r.updated_at).getTime(),
      runningSince: r.run_started_at ? new Date(r.run_started_at).getTime() : null,
      queuedAt: new Date(r.queued_at ?? r.updated_at).getTime(),
      preemptRequestedAt: r.preempt_requested_at ? new Date(r.preempt_requested_at).getTime() : null,
      preemptReason: r.preempt_reason ?? null,
      returnTo: movesElsewhere(r.preempt_reason) ? (notices.get(r.id)?.moveTo ?? null) : null,
      preemptFor: notices.get(r.id)?.for ?? null,
      ...(r.paused ? { paused: true } : {}),
      stepsDone: stepsDone.get(r.id) ?? 0,
      steps: wf.steps ?? 100,
      replan: {
        workload: workloadOf(wf),
        profile,
        threadsPerDevice: (r.placement?.threadsPerDevice as number | undefined) ?? 1,
        last: lastReplan.get(r.id) ?? null,
        sincePlaced: histories.get(r.id)?.sincePlaced ?? null,
        fitted: fitted.has(r.id),
      },
    };
  });

  const storedReasons = new Map<string, string | null>();
  const queued: QueuedJob[] = queuedRows.rows.map((r) => {
    storedReasons.set(r.id, r.wait_reason);
    const wf = (r.wf ?? {}) as WorkflowJson;
    const res = (r.res ?? {}) as ResourcesJson;
    return {
      id: r.id,
      tenantId: r.tenant_id,
      pool: r.pool,
      priority: r.priority,
      queueSeq: r.queue_seq,
      queuedAt: new Date(r.queued_at).getTime(),
      createdAt: new Date(r.created_at).getTime(),
      devices: res.devices ?? 1,
      maxDevices: res.maxDevices ?? res.devices ?? 1,
      memoryPerDeviceBytes: res.memoryPerDeviceMiB ? res.memoryPerDeviceMiB * 2 ** 20 : null,
      workload: workloadOf(wf),
      stepsDone: stepsDone.get(r.id) ?? 0,
      // Runs that count against its attempts (crash back-off): those the platform interrupted
      // (preempted, drained, lost contact) are not the job's.
      attempts: r.attempts - (r.interruptions ?? 0),
      requeueReason: r.requeue_reason,
      profile: histories.get(r.id)?.profile ?? null,
      returnTo: returnTo.get(r.id) ?? null,
      returnFor: returnFor.get(r.id) ?? null,
      preemptedFor: preemptedFor.get(r.id) ?? null,
    };
  });

  return {
    snapshot: { nodes: [...nodes.values()], tenants, running, queued },
    usageRows: usage,
    storedReasons,
    now,
  };
}
