/** Human-readable lines for jobs and events. */
import type { Job, JobEvent } from '../sdk/src/index.js';

export function describeJob(j: Job): string[] {
  const lines = [`job ${j.id}  ${j.name}  ${j.status}`];
  if (j.queuePosition != null) lines.push(`  queue position: ${j.queuePosition}`);
  if (j.estimatedStartAt) lines.push(`  estimated start: ${j.estimatedStartAt}`);
  if (j.waitReason) lines.push(`  waiting for: ${j.waitReason}`);
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
  if (j.finishedAt) lines.push(`  finished: ${j.finishedAt}`);
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
