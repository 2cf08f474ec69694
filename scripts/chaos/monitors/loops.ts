/**
 * The monitors' loops, from the start of the workload until the system stops: /proc every 200 ms,
 * the lock timeline every 250 ms (it must be read before a wipe erases it), the API every second.
 */
import { sleep, type Clock } from '../clock.js';
import { TERMINAL, type JobRec } from '../jobs.js';
import type { SystemUnderTest } from '../system.js';
import type { JobWatcher } from './job-watcher.js';
import type { LockTimeline } from './lock-timeline.js';
import type { ProcessSampler } from './process-sampler.js';

export interface Monitors {
  system: SystemUnderTest;
  timeline: LockTimeline;
  sampler: ProcessSampler;
  watcher: JobWatcher;
  jobs: readonly JobRec[];
  clock: Clock;
}

/** Resolves once system.stopping is set and each loop has finished its round. */
export function runMonitors(m: Monitors): Promise<void> {
  const procTimer = setInterval(() => m.sampler.sample(), 200);
  const timelineLoop = (async () => {
    while (!m.system.stopping) {
      try {
        await m.timeline.poll();
      } catch (e) {
        m.clock.log(`timeline read failed: ${(e as Error).message}`);
      }
      await sleep(250);
    }
  })();
  const apiLoop = (async () => {
    while (!m.system.stopping) {
      try {
        await m.watcher.pollStatuses();
        for (const j of m.jobs) {
          if (j.final) continue;
          await m.watcher.pollEvents(j);
          await m.watcher.pollCheckpoints(j);
          if (TERMINAL.has(j.status)) j.final = true;
        }
      } catch {
        // the API is down: next round
      }
      await sleep(1000);
    }
  })();
  return Promise.all([timelineLoop, apiLoop]).then(() => clearInterval(procTimer));
}
