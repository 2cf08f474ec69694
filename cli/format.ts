/** Human-readable lines for jobs and events. */
import type { Job, JobEvent } from '../sdk/src/index.js';

/** A job that still holds devices: a pause reaches it as a preemption notice, not at once. */
const holdsDevices = (j: Job) => j.status === 'placed' || j.status === 'running';

/** Why a succeeded job ended where it did, as `jobs get` says it. */
const ENDED: Record<NonNullable<Job['finishReason']>, string> = {
  steps_completed: 'all its steps done',
  target_reward: 'its target reward reached',
  target_accuracy: 'its target accuracy reached',
};

/** What a queued job waits for, in words; the reason's code follows in brackets for scripts and docs. */
const WAITING: Record<NonNullable<Job['waitReason']>, string> = {
  capacity: "devices: its pool's are busy, or it has no ready node",
  quota: "its tenant's quota (active jobs, concurrent devices or device-hours)",
  fair_share: 'other tenants under their share to be served first',
  priority: 'jobs of higher priority ahead of it',
  crash_loop: 'its crash back-off to end',
  preempted: 'its turn again after a preemption',
  paused: 'its tenant to resume it',
  unschedulable:
    'a node that can hold it: no ready node of its pool has enough devices, or enough memory a device, even empty',
};

export function describeJob(j: Job): string[] {
  const lines = [`job ${j.id}  ${j.name}  ${j.status}`];
  // A running job under a pause notice is paused too: its status alone would not say so.
  if (j.pausedAt) {
    const leaving = holdsDevices(j)
      ? ' (it checkpoints and leaves its devices, then waits until resumed)'
      : '';
    lines.push(`  paused since ${j.pausedAt}${leaving}`);
  }
  if (j.queuePosition != null) lines.push(`  queue position: ${j.queuePosition}`);
  if (j.estimatedStartAt) lines.push(`  estimated start: ${j.estimatedStartAt}`);
  if (j.waitReason) lines.push(`  waiting for: ${WAITING[j.waitReason] ?? j.waitReason} (${j.waitReason})`);
  // Runs the platform ended (preemptions, drains) do not count toward maxAttempts.
  const runs = j.attempts === j.countedAttempts ? '' : ` (${j.attempts} runs)`;
  lines.push(
    `  pool ${j.pool}, priority ${j.priority}, attempts ${j.countedAttempts}/${j.maxAttempts}${runs}`,
  );
  const finish = j.progress.estimatedFinishAt ? `, estimated finish ${j.progress.estimatedFinishAt}` : '';
  if (j.progress.step !== null)
    lines.push(`  progress: step ${j.progress.step} of ${j.progress.steps}${finish}`);
  else if (finish) lines.push(`  progress: ${j.progress.steps} steps to run${finish}`);
  if (j.startedAt) lines.push(`  started: ${j.startedAt}`);
  if (j.finishedAt)
    lines.push(`  finished: ${j.finishedAt}${j.finishReason ? ` (${ENDED[j.finishReason]})` : ''}`);
  if (j.error) lines.push(`  error: ${j.error}`);
  return lines;
}

export function describeEvent(e: JobEvent): string {
  const details = Object.entries(e.data)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${e.createdAt}  #${e.id}  ${e.type}${details ? `  ${details}` : ''}`;
}

/**
 * What `jobs pause|resume` did, from the job before and after: both routes answer the job whether
 * or not the call changed it (they are idempotent), so `pausedAt` moving is what says it did.
 */
export function pauseOutcome(action: 'pause' | 'resume', before: Job, after: Job): string {
  const changed = before.pausedAt !== after.pausedAt;
  const job = `job ${after.id}`;
  if (action === 'pause' && after.pausedAt) {
    if (!changed) return `${job} was already paused since ${after.pausedAt} (${after.status}): nothing to do`;
    const leaving = holdsDevices(after) ? ': it checkpoints and leaves its devices' : '';
    return `${job} paused (${after.status})${leaving}`;
  }
  if (action === 'resume' && !after.pausedAt) {
    return changed
      ? `${job} resumed (${after.status})`
      : `${job} was not paused (${after.status}): nothing to do`;
  }
  // Paused or resumed again by someone else between the two reads: say where it stands.
  return `${job} ${after.pausedAt ? `paused since ${after.pausedAt}` : 'not paused'} (${after.status})`;
}
