// Workload sources: files are checked as read, the replay skips itself without the trace, and a
// seed reproduces a workload exactly.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileWorkload } from '../workloads/file.js';
import { phillyWorkload } from '../workloads/philly.js';
import { syntheticWorkload } from '../workloads/synthetic.js';

describe('simulator workloads', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sim-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a CSV of jobs into RL jobs on the tenants it names', () => {
    const file = path.join(dir, 'w.csv');
    writeFileSync(file, 'id,tenant,arrival,devices,seconds\nj1,a,0,1,3600\nj2,b,60,3,7200\n');
    const w = fileWorkload(file, 1);
    assert.deepEqual(
      w.tenants.map((t) => t.id),
      ['a', 'b'],
    );
    assert.deepEqual(
      w.jobs.map((j) => [j.id, j.devices, j.arrival]),
      [
        ['j1', 1, 0],
        ['j2', 4, 60],
      ],
    );
    writeFileSync(file, 'id,tenant,arrival,devices\nj1,a,0,1\n');
    assert.throws(() => fileWorkload(file, 1), /missing column seconds/);
  });

  it('skips the Philly replay when the trace is absent', () => {
    assert.equal(phillyWorkload({ seed: 1, path: path.join(dir, 'absent.csv') }), null);
  });

  it('reproduces the synthetic workload from its seed, and another seed gives another', () => {
    const a = JSON.stringify(syntheticWorkload({ seed: 5 }));
    assert.equal(JSON.stringify(syntheticWorkload({ seed: 5 })), a);
    assert.notEqual(JSON.stringify(syntheticWorkload({ seed: 6 })), a);
  });
});
