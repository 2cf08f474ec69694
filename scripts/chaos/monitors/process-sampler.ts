/**
 * Samples the job processes from /proc every 200 ms. Two processes of one job both using CPU for
 * over 3 s means two copies of it are computing: one_process_per_job, seen as it happens rather
 * than only in the lock timeline afterwards. It also remembers when each was last alive, which
 * the timeline checks need to tell a live holder from a dead waiter the lock granted late.
 */
import { procState, procTicks } from '../procfs.js';
import type { Violations } from '../violations.js';

export class ProcessSampler {
  private readonly ticks = new Map<number, number>();
  /** local ms */
  readonly lastAlive = new Map<number, number>();
  private readonly twoSince = new Map<string, number>();

  constructor(
    private readonly pidJob: ReadonlyMap<number, string>,
    private readonly violations: Violations,
  ) {}

  sample(): void {
    const byJob = new Map<string, number[]>();
    for (const [pid, job] of this.pidJob) {
      const st = procState(pid);
      if (!st || st === 'Z') continue;
      this.lastAlive.set(pid, Date.now());
      const ticks = procTicks(pid);
      const before = this.ticks.get(pid) ?? ticks;
      this.ticks.set(pid, ticks);
      if (ticks - before <= 0) continue; // idle since the last sample: waiting, not computing
      byJob.set(job, [...(byJob.get(job) ?? []), pid]);
    }
    for (const [job, pids] of byJob) {
      this.violations.count();
      if (pids.length > 1) {
        const since = this.twoSince.get(job) ?? Date.now();
        this.twoSince.set(job, since);
        if (Date.now() - since > 3000)
          this.violations.violate(
            'one_process_per_job',
            `job ${job}: processes ${pids.join(', ')} all computing for ${Date.now() - since} ms`,
          );
      } else this.twoSince.delete(job);
    }
  }
}
