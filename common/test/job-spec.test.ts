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
