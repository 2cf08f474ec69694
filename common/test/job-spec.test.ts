import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jobSpecSchema } from '../job-spec.js';

test('the minimal spec gets every default; the fuller DESIGN example validates unchanged', () => {
  const min = jobSpecSchema.parse({ name: 'my-run', workflow: { task: { name: 'addition' } } });
  assert.equal(min.pool, 'default');
  assert.equal(min.priority, 'normal');
  assert.deepEqual(min.resources, { devices: 1 });
  assert.equal(min.workflow.algorithm, 'grpo');
  assert.equal(min.workflow.mode, 'auto');
  assert.equal(min.workflow.steps, 100);
  assert.equal(min.workflow.promptsPerStep, 64);
  assert.equal(min.workflow.groupSize, 8);
  const full = {
    name: 'add-grpo',
    pool: 'default',
    priority: 'normal',
    resources: { devices: 1 },
    workflow: {
      algorithm: 'grpo',
      mode: 'auto',
      model: { preset: 'tiny' },
      task: { name: 'addition', digits: 2 },
      steps: 100,
      promptsPerStep: 32,
      groupSize: 8,
      learningRate: 3e-4,
      maxWeightLag: 1,
      checkpointEvery: 20,
    },
  };
  const parsed = jobSpecSchema.parse(full);
  assert.equal(parsed.workflow.promptsPerStep, 32);
  assert.equal(parsed.workflow.task.digits, 2);
});

test('cross-field rules: heads divide dModel, minLength ≤ maxLength', () => {
  const bad = jobSpecSchema.safeParse({
    name: 'x',
    workflow: { model: { dModel: 100, heads: 3 }, task: { name: 'addition' } },
  });
  assert.equal(bad.success, false);
  assert.deepEqual(bad.error!.issues[0]!.path, ['workflow', 'model', 'heads']);
  // A size left out is the preset's: tiny's 4 heads do not divide 30, micro's 2 do.
  const lone = (model: object) =>
    jobSpecSchema.safeParse({ name: 'x', workflow: { model, task: { name: 'addition' } } });
  assert.equal(lone({ dModel: 30 }).success, false);
  assert.equal(lone({ preset: 'micro', dModel: 30 }).success, true);
  const len = jobSpecSchema.safeParse({
    name: 'x',
    workflow: { task: { name: 'reversal', minLength: 6, maxLength: 3 } },
  });
  assert.equal(len.success, false);
  // The one left out is the engine's default (minLength 3, maxLength 6).
  const task = (t: object) =>
    jobSpecSchema.safeParse({ name: 'x', workflow: { task: { name: 'sorting', ...t } } });
  assert.deepEqual(task({ minLength: 10 }).error?.issues[0]?.path, ['workflow', 'task', 'minLength']);
  assert.deepEqual(task({ maxLength: 2 }).error?.issues[0]?.path, ['workflow', 'task', 'maxLength']);
  assert.equal(task({ minLength: 6 }).success, true);
  assert.equal(task({ maxLength: 3 }).success, true);
});

test('microBatches defaults to 1 and must divide promptsPerStep', () => {
  const min = jobSpecSchema.parse({ name: 'x', workflow: { task: { name: 'addition' } } });
  assert.equal(min.workflow.microBatches, 1);
  const ok = jobSpecSchema.parse({
    name: 'x',
    workflow: { task: { name: 'addition' }, promptsPerStep: 32, microBatches: 4 },
  });
  assert.equal(ok.workflow.microBatches, 4);
  const bad = jobSpecSchema.safeParse({
    name: 'x',
    workflow: { task: { name: 'addition' }, promptsPerStep: 32, microBatches: 3 },
  });
  assert.equal(bad.success, false);
  assert.deepEqual(bad.error!.issues[0]!.path, ['workflow', 'microBatches']);
  assert.equal(
    jobSpecSchema.safeParse({ name: 'x', workflow: { task: { name: 'addition' }, microBatches: 0 } }).success,
    false,
  );
});

test("the model's context must hold the task's longest prompt and answer", () => {
  const issue = (workflow: object, extra: object = {}) =>
    jobSpecSchema.safeParse({ name: 'x', workflow, ...extra }).error?.issues[0];
  const reversal = (maxLength: number) => ({ name: 'reversal', minLength: 1, maxLength });
  // Set or the preset's (32): 16 letters reversed need 34 tokens, 15 need 32.
  assert.equal(issue({ task: reversal(15) }), undefined);
  assert.deepEqual(issue({ task: reversal(16) })?.path, ['workflow', 'model', 'contextLength']);
  assert.equal(issue({ model: { contextLength: 34 }, task: reversal(16) }), undefined);
  assert.match(
    issue({ model: { contextLength: 33 }, task: reversal(16) })?.message ?? '',
    /context 33 is shorter than the reversal task's longest prompt and answer \(34 tokens\)/,
  );
  // Addition's default 2 digits need 10; 6 digits need 22.
  assert.equal(issue({ model: { contextLength: 10 }, task: { name: 'addition' } }), undefined);
  assert.ok(issue({ model: { contextLength: 9 }, task: { name: 'addition' } }));
  assert.ok(issue({ model: { contextLength: 21 }, task: { name: 'addition', digits: 6 } }));
  // A job started from a checkpoint runs the checkpoint's model and task, not the spec's.
  const ids = { jobId: crypto.randomUUID(), checkpointId: crypto.randomUUID() };
  assert.equal(issue({ task: reversal(16) }, { initialCheckpoint: ids }), undefined);
});
