/** The checks at the end, once every job has ended or the drain ran out, in a fixed order so that reports compare. */
import type pg from 'pg';
import type { ApiClient } from '../api-client.js';
import type { JobRec } from '../jobs.js';
import type { JobWatcher } from '../monitors/job-watcher.js';
import type { LockTimeline } from '../monitors/lock-timeline.js';
import type { Violations } from '../violations.js';
import { checkAttempts, type FaultRecords } from './attempts.js';
import { checkCheckpointsDownloadable } from './checkpoints.js';
import { checkLockExclusivity } from './lock-exclusivity.js';
import { checkMetrics } from './metrics.js';
import { checkOutcomes, readJobRows } from './outcomes.js';
import { checkResumes } from './resume.js';

export interface FinalCheckInputs {
  violations: Violations;
  sql: pg.Pool;
  client: ApiClient;
  jobs: readonly JobRec[];
  watcher: JobWatcher;
  timeline: LockTimeline;
  /** local ms each job process was last seen alive */
  lastAlive: ReadonlyMap<number, number>;
  faults: FaultRecords;
}

export async function finalChecks(c: FinalCheckInputs): Promise<void> {
  const v = c.violations;
  const rows = await readJobRows(c.sql);
  checkOutcomes(v, rows, c.jobs);

  for (const j of c.jobs) {
    await c.watcher.pollEvents(j); // the events since the last poll
    checkResumes(v, j);
    const row = rows.find((r) => r.id === j.id);
    if (!row) continue;
    checkAttempts(v, j, row, c.faults);
    await checkMetrics(v, c.client, j, row);
  }

  for (const j of c.jobs) {
    await c.watcher.pollCheckpoints(j);
    await checkCheckpointsDownloadable(v, c.client, j);
  }

  await checkLockExclusivity(v, c.timeline, c.lastAlive);
}
