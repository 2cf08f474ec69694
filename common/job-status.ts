/**
 * The job lifecycle (DESIGN.md §3):
 *   queued → admitted → placed → running → succeeded | failed | cancelled
 *   running → preempted → queued   (the scheduler takes devices back after a checkpoint)
 *   running → queued               (the node died; resume from the last committed checkpoint)
 * Cancellation is valid in every non-final state. Every transition is a row in PostgreSQL first,
 * then a notification on Redis.
 */
export const jobStatuses = [
  'queued',
  'admitted',
  'placed',
  'running',
  'preempted',
  'succeeded',
  'failed',
  'cancelled',
] as const;
export type JobStatus = (typeof jobStatuses)[number];

export const finalStatuses: readonly JobStatus[] = ['succeeded', 'failed', 'cancelled'];
export const isFinal = (s: JobStatus) => finalStatuses.includes(s);

/** Why a queued job is not running yet: the question users of job platforms ask most. */
export const waitReasons = [
  'capacity',
  'quota',
  'fair_share',
  'priority',
  'crash_loop',
  'preempted',
  // Its tenant paused it (POST /v1/jobs/{id}/pause): no round places it until it is resumed.
  'paused',
  // No ready node of its pool could hold it even empty (too few devices, or too little memory on
  // them): it waits for a node that can, and holds up nobody meanwhile.
  'unschedulable',
] as const;
export type WaitReason = (typeof waitReasons)[number];

export const priorityLevels = { low: 0, normal: 1, high: 2, urgent: 3 } as const;
export type PriorityName = keyof typeof priorityLevels;
export const priorityName = (n: number): PriorityName =>
  (Object.entries(priorityLevels).find(([, v]) => v === n)?.[0] as PriorityName | undefined) ?? 'normal';
