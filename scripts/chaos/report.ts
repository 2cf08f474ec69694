/** The summary printed at the end, and result.json in the log directory for a closer look. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FaultRec } from './injectors.js';
import type { JobRec } from './jobs.js';
import type { Violations } from './violations.js';

export interface Outcome {
  seed: number;
  jobs: readonly JobRec[];
  violations: Violations;
  faultLog: readonly FaultRec[];
  faultCounts: Readonly<Record<string, number>>;
}

export function printSummary(o: Outcome): void {
  const ok = o.jobs.filter((j) => j.status === 'succeeded').length;
  console.log('\n==== summary ====');
  console.log(
    `seed ${o.seed}; ${o.jobs.length} jobs accepted, ${ok} succeeded; invariant checks ${o.violations.checks}`,
  );
  console.log(`faults: ${JSON.stringify(o.faultCounts)}`);
  console.log(
    `fault sequence: ${o.faultLog.map((f) => `${(f.at / 1000).toFixed(1)}s ${f.kind}(${f.target}${f.detail ? `; ${f.detail}` : ''})`).join('\n  ')}`,
  );
  console.log(`violations: ${o.violations.list.length}`);
  for (const v of o.violations.list)
    console.log(`  [${(v.at / 1000).toFixed(1)}s] ${v.invariant}: ${v.detail}`);
}

export function writeResult(logDir: string, o: Outcome): void {
  writeFileSync(
    path.join(logDir, 'result.json'),
    JSON.stringify(
      {
        seed: o.seed,
        faults: o.faultLog,
        violations: o.violations.list,
        jobs: o.jobs.map((j) => ({ id: j.id, name: j.spec.name, status: j.status, events: j.events })),
      },
      null,
      1,
    ),
  );
}
