/**
 * Reads what a round decides on with a few set-based queries (never one per job): live nodes and
 * their devices, tenants with quotas and decayed usage, jobs holding devices, every queued job, and
 * per-job aggregates of progress and stage profiles.
 */
import type pg from 'pg';
import { modelParameters } from '../planner/plan-job.js';
import type {
  NodeDevices,
  NodeState,
  ProfileSummary,
  QueuedJob,
  RunningJob,
  Snapshot,
  TenantState,
  Workload,
} from '../core/types.js';
import { planJob } from '../planner/plan-job.js';
import { MOVE_REASONS, movesElsewhere, preemptedForOf } from '../core/preempt.js';
import type { StageSample } from '../planner/cost-model.js';
import {
  decisionEventTypes,
  replanEventTypes,
  type ReplanInput,
  type ReplanKind,
} from '../planner/replan.js';
import {
  OUTLIER_FACTOR,
  PROFILE_HISTORY_STEPS,
  PROFILE_WINDOW_STEPS,
  WARMUP_STEPS,
} from '../planner/profile-summary.js';

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
 * The jobs ($1) whose profiles a query reads, each from the step after `lo`: the last $3 steps it
 * profiled (PROFILE_HISTORY_STEPS), read per job as a range of stage_profiles (job_id, step). The
 * fences keep it that way: without them PostgreSQL merged the range into a scan of every row of
 * every job (767 ms at 200 jobs of 500 steps) and asked `cut` once per row. `cut`: the job has
 * profiles before the range, so its warm-up steps are not among them.
 */
const HISTORY = `h AS MATERIALIZED (
  SELECT i.job_id, m.hi - $3::int AS lo,
         EXISTS (SELECT 1 FROM stage_profiles o WHERE o.job_id = i.job_id AND o.step <= m.hi - $3::int) AS cut
    FROM unnest($1::uuid[]) AS i(job_id)
    CROSS JOIN LATERAL (SELECT max(step) AS hi FROM stage_profiles p WHERE p.job_id = i.job_id) m
)`;

export async function readSnapshot(pool: pg.Pool, heartbeatTimeoutMs: number): Promise<SnapshotRead> {
  const [clock, nodeRows, tenantRows, usageRows, runningRows, queuedRows] = await Promise.all([
    pool.query(`SELECT (extract(epoch from clock_timestamp()) * 1000)::float8 AS now`),
    pool.query(
      `SELECT n.id, p.name AS pool, n.host_memory_bytes, d.index, d.memory_bytes, d.threads
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
              preempt_reason, updated_at, progress_step,
              spec->'workflow' AS wf, spec->'resources' AS res
         FROM jobs WHERE status IN ('placed', 'running') AND node_id IS NOT NULL`,
    ),
    pool.query(
      `SELECT id, tenant_id, pool, priority, queue_seq, queued_at, created_at, attempts, interruptions, requeue_reason, wait_reason,
              spec->'workflow' AS wf, spec->'resources' AS res
         FROM jobs WHERE status = 'queued'`,
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

  // Where queued jobs resume and the profiles, one aggregate query each over the jobs that need them.
  const runningIds = runningRows.rows.map((r) => r.id as string);
  const resumedIds = queuedRows.rows.filter((r) => r.attempts > 0).map((r) => r.id as string);
  const profiled = [...runningIds, ...resumedIds];
  const preemptedIds = queuedRows.rows
    .filter((r) => r.requeue_reason === 'preempted')
    .map((r) => r.id as string);
  const noticedIds = runningRows.rows.filter((r) => r.preempt_requested_at).map((r) => r.id as string);
  const [checkpointed, profileRows, stageRows, replanRows, fittedRows, returnRows, noticeRows] =
    await Promise.all([
      resumedIds.length
        ? pool.query(
            `SELECT job_id, max(step) AS step FROM checkpoints WHERE job_id = ANY($1::uuid[]) GROUP BY job_id`,
            [resumedIds],
          )
        : { rows: [] },
      profiled.length
        ? pool.query(
            `WITH ${HISTORY}, sp AS (
               SELECT sp.*, h.cut OR sp.step >= min(sp.step) OVER (PARTITION BY sp.job_id) + $2 AS settled
                 FROM h CROSS JOIN LATERAL (SELECT * FROM stage_profiles p WHERE p.job_id = h.job_id AND p.step > h.lo OFFSET 0) sp
             )
             SELECT sp.job_id, count(DISTINCT sp.step)::int AS steps, sum(sp.seconds)::float8 AS busy,
                  sum(sp.onload_seconds + sp.offload_seconds)::float8 AS switching,
                  max(sp.peak_bytes)::float8 AS peak,
                  extract(epoch from max(sp.created_at) - min(sp.created_at))::float8 AS span,
                  -- Past the warm-up steps (WARMUP_STEPS), once there are two: the job's pace.
                  count(DISTINCT sp.step) FILTER (WHERE sp.settled)::int AS settled_steps,
                  sum(sp.seconds) FILTER (WHERE sp.settled)::float8 AS settled_busy,
                  sum(sp.onload_seconds + sp.offload_seconds) FILTER (WHERE sp.settled)::float8 AS settled_switching,
                  extract(epoch from max(sp.created_at) FILTER (WHERE sp.settled)
                                   - min(sp.created_at) FILTER (WHERE sp.settled))::float8 AS settled_span,
                  -- Since the current placement (re-planning measures a move's gain from these).
                  count(DISTINCT sp.step) FILTER (WHERE sp.created_at >= j.placed_at)::int AS since_steps,
                  extract(epoch from max(sp.created_at) FILTER (WHERE sp.created_at >= j.placed_at)
                                   - min(sp.created_at) FILTER (WHERE sp.created_at >= j.placed_at))::float8 AS since_span
             FROM sp JOIN jobs j ON j.id = sp.job_id
            GROUP BY sp.job_id`,
            [profiled, WARMUP_STEPS, PROFILE_HISTORY_STEPS],
          )
        : { rows: [] },
      // The cost model's samples per stage and shape: means of the calls within 3× the median
      // (profile-summary.ts `trimmedMean`), so periodic evaluation counts and one-off stalls do not,
      // over each shape's most recent steps; the job's warm-up steps left out (profile-summary.ts
      // `stageSamples` does the same).
      profiled.length
        ? pool.query(
            `WITH ${HISTORY.replaceAll('$3', '$5')}, r AS (
             SELECT sp.job_id, stage, batch, devices, step,
                    greatest(0, seconds - onload_seconds - offload_seconds) AS compute,
                    onload_seconds + offload_seconds AS switching, occupancy,
                    coalesce(partial_tail, 0) > 0 AS partial,
                    CASE WHEN h.cut THEN -2147483648 ELSE min(step) OVER (PARTITION BY sp.job_id) END AS first
               FROM h CROSS JOIN LATERAL (SELECT * FROM stage_profiles p WHERE p.job_id = h.job_id AND p.step > h.lo OFFSET 0) sp
              WHERE stage IN ('generate', 'train') AND batch > 0 AND devices > 0
           ), w AS (
             -- A job's first profiled steps are its warm-up, not its pace (WARMUP_STEPS); each
             -- shape is fitted from its most recent steps (PROFILE_WINDOW_STEPS).
             SELECT job_id, stage, batch, devices, partial, compute, switching, occupancy,
                    dense_rank() OVER (PARTITION BY job_id, stage, batch, devices, partial ORDER BY step DESC) AS recent
               FROM r WHERE step >= first + $3
           ), p AS (
             SELECT job_id, stage, batch, devices, partial, compute, switching, occupancy FROM w WHERE recent <= $4
           ), m AS (
             SELECT job_id, stage, batch, devices, partial,
                    percentile_cont(0.5) WITHIN GROUP (ORDER BY compute) AS mc,
                    percentile_cont(0.5) WITHIN GROUP (ORDER BY switching) AS ms
               FROM p GROUP BY job_id, stage, batch, devices, partial
           )
           SELECT p.job_id, p.stage, p.batch, p.devices, p.partial, count(*)::int AS n,
                  coalesce(avg(p.compute) FILTER (WHERE p.compute <= $2 * m.mc), max(m.mc))::float8 AS compute,
                  coalesce(avg(p.switching) FILTER (WHERE p.switching <= $2 * m.ms), max(m.ms))::float8 AS switching,
                  avg(p.occupancy) FILTER (WHERE p.compute <= $2 * m.mc)::float8 AS occupancy
             FROM p JOIN m USING (job_id, stage, batch, devices, partial)
            GROUP BY p.job_id, p.stage, p.batch, p.devices, p.partial`,
            [profiled, OUTLIER_FACTOR, WARMUP_STEPS, PROFILE_WINDOW_STEPS, PROFILE_HISTORY_STEPS],
          )
        : { rows: [] },
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
             CROSS JOIN LATERAL (SELECT data FROM job_events
                                  WHERE job_id = j.id AND type = 'job.preempted' ORDER BY id DESC LIMIT 1) pe
             LEFT JOIN LATERAL (SELECT data FROM job_events
                                  WHERE job_id = j.id AND type = 'job.placed' ORDER BY id DESC LIMIT 1) pl ON true
             LEFT JOIN LATERAL (SELECT data FROM job_events
                                  WHERE job_id = j.id AND type = 'job.preempting' ORDER BY id DESC LIMIT 1) pg ON true
            WHERE j.id = ANY($1::uuid[])
              AND (pe.data->>'reason' IN ('replan', 'reclaim', 'aging', 'priority')
                   OR pe.data->>'reason' = ANY($2::text[]))`,
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
  const sincePlaced = new Map<string, NonNullable<ReplanInput['sincePlaced']>>();
  for (const r of profileRows.rows)
    if (r.since_steps >= 2)
      sincePlaced.set(r.job_id, { steps: r.since_steps, stepSeconds: r.since_span / (r.since_steps - 1) });
  const stageSamples = new Map<string, StageSample[]>();
  for (const r of stageRows.rows) {
    const list = stageSamples.get(r.job_id) ?? [];
    list.push({
      stage: r.stage,
      batch: r.batch,
      devices: r.devices,
      computeSeconds: r.compute,
      switchSeconds: r.switching,
      count: r.n,
      ...(r.occupancy === null ? {} : { occupancy: r.occupancy }),
      ...(r.partial ? { partial: true } : {}),
    });
    stageSamples.set(r.job_id, list);
  }
  const stepsDone = new Map<string, number>();
  // A running job's step is on its row (each report moves it; a resumed run starts at its checkpoint's).
  for (const r of runningRows.rows)
    if (r.progress_step !== null) stepsDone.set(r.id, Number(r.progress_step));
  for (const r of checkpointed.rows) stepsDone.set(r.job_id, Number(r.step));
  const profiles = new Map<string, ProfileSummary>();
  for (const r of profileRows.rows) {
    // The mean step from the steps past the warm-up once there are two of them (the first steps ran
    // 1.5–2.5× the job's later pace); `samples` still counts every profiled step.
    const settled = (r.settled_steps as number) >= 2;
    const steps = settled ? (r.settled_steps as number) : Math.max(1, r.steps as number);
    const busy = ((settled ? r.settled_busy : r.busy) as number) / steps;
    const span = (settled ? r.settled_span : r.span) as number;
    profiles.set(r.job_id, {
      stepSeconds: steps > 1 ? Math.max(busy, span / (steps - 1)) : busy / 0.8,
      busySeconds: busy,
      switchSeconds: ((settled ? r.settled_switching : r.switching) as number) / steps,
      peakBytes: r.peak as number,
      samples: Math.max(0, (r.steps as number) - WARMUP_STEPS),
      stages: stageSamples.get(r.job_id) ?? [],
    });
  }

  const running: RunningJob[] = runningRows.rows.map((r) => {
    const wf = (r.wf ?? {}) as WorkflowJson;
    const res = (r.res ?? {}) as ResourcesJson;
    const devices = ((r.placement?.devices as number[] | undefined) ?? []).slice();
    const profile = profiles.get(r.id) ?? null;
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
      stepsDone: stepsDone.get(r.id) ?? 0,
      steps: wf.steps ?? 100,
      replan: {
        workload: workloadOf(wf),
        profile,
        threadsPerDevice: (r.placement?.threadsPerDevice as number | undefined) ?? 1,
        last: lastReplan.get(r.id) ?? null,
        sincePlaced: sincePlaced.get(r.id) ?? null,
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
      profile: profiles.get(r.id) ?? null,
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
