/**
 * The engine a job's spec asks for: a preset alone, or every size, those the spec leaves out taken
 * from its preset. A lone `contextLength` or `dModel` used to be dropped: the job ran the bare preset.
 * And the tables the spec reads agree with the engine: the preset sizes it builds, and the context
 * each task needs (a spec the API accepted with less failed on its first run).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modelPresets, presetSizes, taskContextNeeded, taskNames } from '../../common/engine-vocabulary.js';
import { jobSpecSchema, taskSpecSchema } from '../../common/job-spec.js';
import { createEngine } from '../../native/index.js';
import { engineOptions } from '../job-runner.js';

const placement = { threadsPerDevice: 1, devices: [0], memoryBytes: 2 ** 28 } as Parameters<
  typeof engineOptions
>[1];
const engineFor = (model: object) =>
  engineOptions(
    jobSpecSchema.parse({ name: 'x', workflow: { model, task: { name: 'addition' } } }),
    placement,
  );
const modelOf = (model: object) => engineFor(model).model;

test('sizes a spec leaves out come from its preset; a preset alone stays a preset', () => {
  assert.deepEqual(modelOf({ preset: 'micro' }), { preset: 'micro' });
  assert.deepEqual(modelOf({ preset: 'micro', contextLength: 40 }), {
    dModel: 32,
    layers: 1,
    heads: 2,
    context: 40,
  });
  assert.deepEqual(modelOf({ dModel: 64 }), { dModel: 64, layers: 2, heads: 4 });
});

test('presetSizes is what the engine builds for each preset, with sizes set or not', async () => {
  for (const preset of modelPresets) {
    // The second spec sets a size (the preset's own), so the worker passes sizes, not the preset.
    for (const model of [{ preset }, { preset, dModel: presetSizes[preset].dModel }]) {
      const engine = createEngine(engineFor(model));
      try {
        const { config } = await engine.info();
        const { dModel, layers, heads, context } = config;
        assert.deepEqual(
          { dModel, layers, heads, contextLength: context },
          presetSizes[preset],
          JSON.stringify(model),
        );
      } finally {
        await engine.close();
      }
    }
  }
});

/** The bounds the job spec puts on a task size: every value a submission may carry. */
function allowed(field: 'digits' | 'maxLength'): number[] {
  const n = taskSpecSchema.shape[field].unwrap();
  const out: number[] = [];
  for (let v = n.minValue!; v <= n.maxValue!; v++) out.push(v);
  return out;
}

test('taskContextNeeded is the shortest context the engine builds each task with', async () => {
  const sizes = {
    addition: [{}, ...allowed('digits').map((digits) => ({ digits }))],
    reversal: [{}, ...allowed('maxLength').map((maxLength) => ({ minLength: 1, maxLength }))],
    sorting: [{}, ...allowed('maxLength').map((maxLength) => ({ minLength: 1, maxLength }))],
  } satisfies Record<(typeof taskNames)[number], object[]>;
  for (const name of taskNames) {
    for (const size of sizes[name]) {
      const task = { name, ...size };
      const needed = taskContextNeeded[name](task);
      const build = (context: number) =>
        createEngine({ device: { threads: 1 }, model: { dModel: 16, layers: 1, heads: 1, context }, task });
      const label = `${JSON.stringify(task)} needs ${needed}`;
      assert.throws(
        () => build(needed - 1),
        (e: Error & { code?: string }) =>
          e.code === 'INVALID_ARGUMENT' && /shorter than the task's prompt \+ answer/.test(e.message),
        label,
      );
      await build(needed).close();
    }
  }
});
