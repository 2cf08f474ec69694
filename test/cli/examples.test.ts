import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { jobSpecSchema, taskNames } from '../../common/job-spec.js';
import { readSpecFile } from '../../cli/spec-file.js';

const dir = new URL('../../examples/', import.meta.url);

test('examples/ holds a valid job file for every built-in task', async () => {
  const tasks = new Set<string>();
  for (const file of readdirSync(dir)) {
    const spec = await readSpecFile(new URL(file, dir).pathname);
    const parsed = jobSpecSchema.safeParse(spec);
    assert.ok(parsed.success, `${file}: ${parsed.error?.message}`);
    tasks.add(parsed.data.workflow.task.name);
  }
  assert.deepEqual([...tasks].sort(), [...taskNames].sort());
});
