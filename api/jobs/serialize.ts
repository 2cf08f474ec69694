/** The public job object (DESIGN.md §3), built from a row whether Prisma or hand-written SQL read it. */
import { isFinal, priorityName, type JobStatus, type WaitReason } from '../../common/job-status.js';
import type { JobSpec } from '../../common/job-spec.js';
import type { FinishReason } from '../../common/node-protocol/index.js';

export interface JobRecord {
  id: string;
  tenantId: string;
  name: string;
  status: JobStatus;
  priority: number;
  pool: string;
  devices: number;
  spec: unknown;
  attempts: number;
  /** Runs the platform ended (preemption, drain, lost contact): they do not count toward maxAttempts. */
  interruptions: number;
  maxAttempts: number;
  queueSeq: number;
  waitReason: string | null;
  lastError: string | null;
  finishReason: FinishReason | null;
  deviceSeconds: number;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** Set while its tenant has it paused (api/jobs/pause.ts). */
  pausedAt: Date | null;
  progress: ProgressRecord;
}

/** jobs.progress_step/progress_at and pace_step/pace_at (moved by each report: common/jobs/job-report.ts). */
export interface ProgressRecord {
  step: number | null;
  at: Date | null;
  paceStep: number | null;
  paceAt: Date | null;
}

/** Steps of the current run needed before its pace is trusted for an estimate. */
export const PACE_MIN_STEPS = 3;

/**
 * When a running job is expected to reach its last step at the pace of its current run so far (the
 * run's first reported step to its newest: the start of the run, its engine build and warm-up, left
 * out). Null until the run has `PACE_MIN_STEPS` steps behind it. The pace includes the time the job
 * waits for devices it shares, and stopping early at a target reward or accuracy makes it earlier.
 */
export function estimateFinish(p: ProgressRecord, steps: number): Date | null {
  if (p.step === null || p.at === null || p.paceStep === null || p.paceAt === null) return null;
  const done = p.step - p.paceStep;
  if (done < PACE_MIN_STEPS || p.step >= steps) return null;
  const perStep = (p.at.getTime() - p.paceAt.getTime()) / done;
  return new Date(p.at.getTime() + Math.round((steps - p.step) * perStep));
}

/** A timestamp column as node-pg reads it (a Date), or as `row_to_json` writes it (a string). */
const dateOf = (v: unknown): Date | null =>
  v === null || v === undefined ? null : v instanceof Date ? v : new Date(v as string);

/** Maps a `RETURNING *` / `SELECT *` row of the jobs table, or its `row_to_json`. */
export function jobFromRow(r: Record<string, unknown>): JobRecord {
  return {
    id: r.id as string,
    tenantId: r.tenant_id as string,
    name: r.name as string,
    status: r.status as JobStatus,
    priority: r.priority as number,
    pool: r.pool as string,
    devices: r.devices as number,
    spec: r.spec,
    attempts: r.attempts as number,
    interruptions: (r.interruptions as number | undefined) ?? 0,
    maxAttempts: r.max_attempts as number,
    queueSeq: r.queue_seq as number,
    waitReason: (r.wait_reason as string | null) ?? null,
    lastError: (r.last_error as string | null) ?? null,
    finishReason: (r.finish_reason as FinishReason | null) ?? null,
    deviceSeconds: r.device_seconds as number,
    createdAt: dateOf(r.created_at)!,
    updatedAt: dateOf(r.updated_at)!,
    startedAt: dateOf(r.started_at),
    finishedAt: dateOf(r.finished_at),
    pausedAt: dateOf(r.paused_at),
    progress: {
      step: (r.progress_step as number | null) ?? null,
      at: dateOf(r.progress_at),
      paceStep: (r.pace_step as number | null) ?? null,
      paceAt: dateOf(r.pace_at),
    },
  };
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** Queue facts from the scheduler's last round (api/jobs/queue-view.ts), for a queued job. */
export interface QueueFacts {
  queuePosition: number;
  estimatedStartAt: string | null;
  estimatedFinishAt: string | null;
  waitReason: string;
}

export function serializeJob(j: JobRecord, extra: { queue?: QueueFacts | null } = {}) {
  // A paused job is in no round's order: a view from a round before the pause is stale.
  const q = j.status === 'queued' && !j.pausedAt ? (extra.queue ?? null) : null;
  return {
    id: j.id,
    object: 'job' as const,
    name: j.name,
    status: j.status,
    priority: priorityName(j.priority),
    pool: j.pool,
    spec: j.spec as JobSpec,
    attempts: j.attempts,
    countedAttempts: Math.max(0, j.attempts - j.interruptions),
    maxAttempts: j.maxAttempts,
    queuePosition: q?.queuePosition ?? null,
    waitReason:
      j.status !== 'queued'
        ? null
        : j.pausedAt
          ? ('paused' as const)
          : (((q?.waitReason ?? j.waitReason) as WaitReason | null) ?? null),
    estimatedStartAt: q?.estimatedStartAt ?? null,
    deviceSeconds: j.deviceSeconds,
    error: j.lastError,
    finishReason: j.finishReason,
    createdAt: j.createdAt.toISOString(),
    updatedAt: j.updatedAt.toISOString(),
    startedAt: iso(j.startedAt),
    finishedAt: iso(j.finishedAt),
    // Paused when it finished (cancelled, or done before its notice): it is not paused now.
    pausedAt: isFinal(j.status) ? null : iso(j.pausedAt),
    progress: {
      step: j.progress.step,
      steps: (j.spec as JobSpec).workflow.steps,
      updatedAt: iso(j.progress.at),
      // Running: at the pace of its run so far; queued: the scheduler's replay of the queue.
      estimatedFinishAt:
        j.status === 'running'
          ? iso(estimateFinish(j.progress, (j.spec as JobSpec).workflow.steps))
          : (q?.estimatedFinishAt ?? null),
    },
  };
}
