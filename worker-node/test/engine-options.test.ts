/**
 * The engine a job's spec asks for: a preset alone, or every size, those the spec leaves out taken
 * from its preset. A lone `contextLength` or `dModel` used to be dropped: the job ran the bare preset.
 * And the tables the spec reads agree with the engine: the preset sizes it builds, and the context
 * each task needs (a spec the API accepted with less failed on its first run), and the model and task
 * the API holds a spec with an initialCheckpoint to.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { modelPresets, presetSizes, taskContextNeeded, taskNames } from '../../common/engine-vocabulary.js';
import { checkpointSpec, engineModelAndTask, jobSpecSchema, taskSpecSchema } from '../../common/job-spec.js';
import { createEngine, Engine } from '../../native/index.js';
import { engineOptions, sameModelAs } from '../job-runner.js';

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

const specOf = (workflow: object) => jobSpecSchema.parse({ name: 'x', workflow });

test('engineModelAndTask is the model and task the engine builds from a spec', async () => {
  for (const workflow of [
    { model: { preset: 'micro' }, task: { name: 'addition', digits: 3 } },
    { model: { preset: 'small', contextLength: 40 }, task: { name: 'reversal', minLength: 2, maxLength: 8 } },
    { model: { dModel: 64, heads: 2 }, task: { name: 'sorting' } },
  ]) {
    const spec = specOf(workflow);
    const engine = createEngine(engineOptions(spec, placement));
    try {
      const { dModel, layers, heads, context } = (await engine.info()).config;
      const { name, digits, minLength, maxLength } = engine.options.task;
      const ran = engineModelAndTask(spec);
      assert.deepEqual(
        ran.model,
        { dModel, layers, heads, contextLength: context },
        JSON.stringify(workflow),
      );
      assert.deepEqual(ran.task, { name, digits, minLength, maxLength }, JSON.stringify(workflow));
      assert.equal(ran.preset, engine.options.preset || null);
      assert.equal(ran.seed, engine.options.seed);
    } finally {
      await engine.close();
    }
  }
});

// Why the API refuses a spec whose task or model contradicts its initialCheckpoint: the worker
// resumes the learner from the checkpoint alone and builds every other engine like it
// (job-runner.ts run()), so the spec's task and sizes, even a maxLength the weights could serve,
// are never used.
test("a job resumed from a checkpoint runs the checkpoint's model and task, not its spec's", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'timeshare-engine-options-'));
  try {
    const source = specOf({ model: { preset: 'micro' }, task: { name: 'reversal', maxLength: 6, seed: 7 } });
    const saved = createEngine(engineOptions(source, placement));
    await saved.saveCheckpoint(dir);
    await saved.close();
    const spec = specOf({
      model: { preset: 'tiny' },
      task: { name: 'sorting', minLength: 1, maxLength: 5, seed: 3 },
    });
    const learner = await Engine.fromCheckpoint(dir, engineOptions(spec, placement).device);
    try {
      const opts = sameModelAs(learner, engineOptions(spec, placement));
      assert.deepEqual(opts.model, { preset: 'micro' });
      const { name, digits, minLength, maxLength } = opts.task;
      assert.deepEqual({ name, digits, minLength, maxLength }, engineModelAndTask(source).task);
      // The generator is seeded from the learner's seed (plus one), as a fresh job's is.
      assert.equal(opts.seed, 7);
      // The spec the API stores for such a job builds the engine the checkpoint restores.
      const stored = createEngine(engineOptions(checkpointSpec(spec, source), placement));
      try {
        const [a, b] = [await stored.info(), await learner.info()];
        assert.deepEqual(a.config, b.config);
        assert.deepEqual(stored.options.task, learner.options.task);
        assert.equal(stored.options.seed, learner.options.seed);
      } finally {
        await stored.close();
      }
    } finally {
      await learner.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
