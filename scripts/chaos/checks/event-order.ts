/**
 * Events of a job come in id order, and nothing happens to a job after it ended (a refund of its
 * last attempt may still come: it corrects the count, it is not something that happened to the job).
 */
import type { JobEvent, JobRec } from '../jobs.js';
import { TERMINAL } from '../jobs.js';
import type { Violations } from '../violations.js';

/** Checks one event of a page read after job.lastEventId, before it is added to job.events. */
export function checkEventOrder(v: Violations, job: JobRec, e: JobEvent, prev: number): void {
  v.count();
  if (!(Number(e.id) > prev))
    v.violate(
      'events_monotonic',
      `job ${job.id}: event ${e.id} (${e.type}) after ${prev} in a page after=${job.lastEventId}`,
    );
  const lastTerminal = job.events.find((x) => TERMINAL.has(x.type.replace('job.', '')));
  if (lastTerminal && e.type.startsWith('job.') && e.type !== 'job.attempt_refunded')
    v.violate(
      'no_event_after_final',
      `job ${job.id}: ${e.type} (${e.id}) after ${lastTerminal.type} (${lastTerminal.id})`,
    );
}
