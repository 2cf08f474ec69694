/**
 * The engine a job's spec asks for: a preset alone, or every size, those the spec leaves out taken
 * from its preset. A lone `contextLength` or `dModel` used to be dropped: the job ran the bare preset.
 * And the preset table the spec and the worker read agrees with the sizes the engine builds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jobSpecSchema } from '../../common/job-spec.js';
import { modelPresets, presetSizes } from '../../common/engine-vocabulary.js';
import { createEngine } from '../../native/index.js';
import { engineOptions } from '../job-runner.js';

const placement = { threadsPerDevice: 1, devices: [0], memoryBytes: 2 ** 28 } as Parameters<
  typeof engineOptions
>[1];
const modelOf = (model: object) =>
  engineOptions(
    jobSpecSchema.parse({ name: 'x', workflow: { model, task: { name: 'addition' } } }),
    placement,
  ).model;

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

test('presetSizes is what the engine builds for each preset', async () => {
  for (const preset of modelPresets) {
    const engine = createEngine({ model: { preset }, task: { name: 'addition' } });
    try {
      const { config } = await engine.info();
      const { dModel, layers, heads } = config;
      assert.deepEqual({ dModel, layers, heads }, presetSizes[preset], preset);
    } finally {
      await engine.close();
    }
  }
});
