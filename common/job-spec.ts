/**
 * The job spec (DESIGN.md §3): one schema validates submissions, fills defaults, and generates the
 * OpenAPI document. The minimal spec every version accepts is `{"name", "workflow": {"task": {"name"}}}`.
 * Objects are strict: an unknown field is a 400 naming it, so typos never pass silently.
 */
import { z } from './zod.js';
import { priorityLevels } from './job-status.js';
import {
  algorithms,
  defaultSeed,
  modelPresets,
  presetSizes,
  taskContextNeeded,
  taskDefaults,
  taskNames,
  taskSizesUsed,
} from './engine-vocabulary.js';

export { algorithms, modelPresets, taskNames };
export const placementModes = ['auto', 'temporal', 'spatial', 'hybrid'] as const;

const int = (min: number, max: number) => z.number().int().min(min).max(max);

/** Pool names are shared by job specs and node registration. */
export const poolNameSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9-]*$/, 'lowercase letters, digits and "-"');

export const taskSpecSchema = z
  .strictObject({
    name: z.enum(taskNames).openapi({ description: 'Task with a verifiable reward' }),
    digits: int(1, 6).optional().openapi({ description: 'addition: digits per operand (default 2)' }),
    minLength: int(1, 16)
      .optional()
      .openapi({ description: `reversal/sorting: shortest input (default ${taskDefaults.minLength})` }),
    maxLength: int(1, 16)
      .optional()
      .openapi({ description: `reversal/sorting: longest input (default ${taskDefaults.maxLength})` }),
    seed: int(0, 2 ** 31 - 1)
      .optional()
      .openapi({
        description:
          `Seed of the initial weights and the sampling stream (default ${defaultSeed}). A job started from ` +
          "an initialCheckpoint continues the checkpoint's random state: its seed is the checkpoint's",
      }),
  })
  // With the engine's defaults for the one left out: `minLength: 10` alone was accepted and failed
  // at its first run (the default maxLength is 6).
  .superRefine((t, ctx) => {
    if ((t.minLength ?? taskDefaults.minLength) <= (t.maxLength ?? taskDefaults.maxLength)) return;
    ctx.addIssue({
      code: 'custom',
      path: [t.minLength === undefined ? 'maxLength' : 'minLength'],
      message:
        t.maxLength === undefined
          ? `minLength must not exceed maxLength (default ${taskDefaults.maxLength}): set maxLength too`
          : t.minLength === undefined
            ? `maxLength must be at least minLength (default ${taskDefaults.minLength}): set minLength too`
            : 'minLength must not exceed maxLength',
    });
  })
  .openapi('TaskSpec');

export const modelSpecSchema = z
  .strictObject({
    preset: z.enum(modelPresets).default('tiny'),
    layers: int(1, 24).optional(),
    dModel: int(16, 2048).optional(),
    heads: int(1, 32).optional(),
    contextLength: int(8, 4096)
      .optional()
      .openapi({
        description:
          "Tokens of context (default: the preset's, 32). It must hold the task's longest prompt and answer " +
          '(addition: 3 × digits + 4; reversal and sorting: 2 × maxLength + 2), or the job is refused ' +
          '(400 naming this field), unless it starts from an initialCheckpoint',
      }),
  })
  // Sizes it leaves out come from its preset (`presetSizes`), as the worker builds the engine.
  .refine(
    (m) => (m.dModel ?? presetSizes[m.preset].dModel) % (m.heads ?? presetSizes[m.preset].heads) === 0,
    {
      message: 'dModel must be divisible by heads (sizes left out are the preset’s)',
      path: ['heads'],
    },
  )
  .openapi('ModelSpec');

export const workflowSpecSchema = z
  .strictObject({
    algorithm: z.enum(algorithms).default('grpo'),
    mode: z.enum(placementModes).default('auto'),
    model: modelSpecSchema.default({ preset: 'tiny' }),
    task: taskSpecSchema,
    steps: int(1, 1_000_000).default(100),
    promptsPerStep: int(1, 4096).default(64),
    groupSize: int(2, 256).default(8),
    learningRate: z.number().positive().max(1).default(3e-4),
    temperature: z.number().positive().max(10).default(1),
    maxWeightLag: int(0, 64).default(1),
    microBatches: int(1, 4096)
      .default(1)
      .openapi({
        description:
          'spatial: each step is generated and trained in this many micro-batches (must divide promptsPerStep), ' +
          'so that training micro-batch i overlaps generating micro-batch i + 1; 1 = whole steps',
      }),
    partialTail: z
      .number()
      .min(0)
      .max(0.5)
      .optional()
      .openapi({
        description:
          'Partial rollouts (temporal placements): each step stops generating once at most this share of its ' +
          'prompt groups is unfinished, trains on the finished ones and carries the rest into the next step ' +
          '(their tokens keep the weight version they were sampled under; a group is carried at most ' +
          'maxWeightLag times). 0 = off; absent = the planner decides for mode auto (it turns it on where the ' +
          "job's profile shows a straggler tail)",
      }),
    checkpointEvery: int(1, 1_000_000).default(20),
    keepCheckpoints: int(1, 1_000_000)
      .optional()
      .openapi({
        description:
          "How many of the job's newest checkpoints are kept: when a newer one is recorded, older ones are " +
          'deleted, their records at once and their files soon after. A checkpoint another job was submitted ' +
          'to start from (initialCheckpoint) is kept. Absent: every checkpoint is kept',
      }),
    evalEvery: int(1, 1_000_000).default(10),
    warmup: z
      .strictObject({
        maxSteps: int(0, 100_000).default(2000),
        targetAccuracy: z.number().min(0).max(1).default(0.3),
      })
      .default({ maxSteps: 2000, targetAccuracy: 0.3 })
      .openapi({
        description: 'Supervised warm-up before RL (fresh models only): stops at the target probe accuracy',
      }),
    targetAccuracy: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .openapi({ description: 'Succeed early once held-out accuracy reaches this' }),
    targetReward: z.number().min(0).max(1).optional().openapi({
      description: 'Succeed early once the mean training reward of the last 3 steps reaches this',
    }),
  })
  .openapi('WorkflowSpec');

export const resourcesSpecSchema = z
  .strictObject({
    devices: int(1, 1024).default(1).openapi({ description: 'Devices the job needs at least' }),
    maxDevices: int(1, 1024).optional().openapi({ description: 'Devices the job can use at most' }),
    memoryPerDeviceMiB: int(1, 1 << 24).optional(),
  })
  .refine((r) => r.maxDevices === undefined || r.maxDevices >= r.devices, {
    message: 'maxDevices must be at least devices',
    path: ['maxDevices'],
  })
  .openapi('ResourcesSpec');

export const jobSpecSchema = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(128)
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9._-]*$/,
        'letters, digits, ".", "_" and "-", starting with a letter or digit',
      ),
    pool: poolNameSchema.default('default'),
    priority: z.enum(Object.keys(priorityLevels) as [keyof typeof priorityLevels]).default('normal'),
    maxAttempts: int(1, 20).default(3),
    resources: resourcesSpecSchema.default({ devices: 1 }),
    workflow: workflowSpecSchema,
    initialCheckpoint: z
      .strictObject({ jobId: z.uuid(), checkpointId: z.uuid() })
      .optional()
      .openapi({
        description:
          "Start from a checkpoint of one of your own jobs. The job runs the checkpoint's model and task: a " +
          'task, a size of it (addition: digits; reversal, sorting: minLength, maxLength), its seed or a model ' +
          "size (preset, dModel, layers, heads, contextLength) this spec sets that differs from the checkpoint's " +
          "is refused (400 naming the field); those it leaves out are the checkpoint's. The job as stored and " +
          'returned shows the model and task it runs: workflow.model with every size, workflow.task with the ' +
          "sizes its task uses and the checkpoint's seed",
      }),
  })
  .refine((j) => j.workflow.mode !== 'spatial' || j.resources.devices >= 2, {
    message: 'spatial mode needs at least 2 devices (generation and training on disjoint devices)',
    path: ['workflow', 'mode'],
  })
  .refine((j) => !j.workflow.partialTail || j.workflow.maxWeightLag >= 1, {
    message: 'partialTail needs maxWeightLag >= 1 (a carried group finishes under newer weights)',
    path: ['workflow', 'partialTail'],
  })
  .refine((j) => j.workflow.promptsPerStep % j.workflow.microBatches === 0, {
    message: 'microBatches must divide promptsPerStep',
    path: ['workflow', 'microBatches'],
  })
  // The engine refuses a context that cannot hold the task's prompt and answer when it is built, at
  // the job's first run; refused here, the submission writes nothing. A job started from a
  // checkpoint runs the checkpoint's model and task: what its spec sets is checked against those
  // instead (`initialCheckpointConflict`, at submission).
  .superRefine((j, ctx) => {
    if (j.initialCheckpoint) return;
    const { model, task } = j.workflow;
    const context = engineModelAndTask(j).model.contextLength;
    const needed = taskContextNeeded[task.name](task);
    if (context >= needed) return;
    const whose = model.contextLength === undefined ? ` (the ${model.preset} preset's)` : '';
    ctx.addIssue({
      code: 'custom',
      path: ['workflow', 'model', 'contextLength'],
      message:
        `model context ${context}${whose} is shorter than the ${task.name} task's longest prompt and ` +
        `answer (${needed} tokens): set contextLength to at least ${needed}`,
    });
  })
  .openapi('JobSpec', {
    example: { name: 'add-grpo', workflow: { task: { name: 'addition', digits: 2 } } },
  });

export type JobSpecInput = z.input<typeof jobSpecSchema>;
export type JobSpec = z.output<typeof jobSpecSchema>;

/**
 * The model and task a job's engine is built with from its spec (worker-node/job-runner.ts
 * `engineOptions`): sizes the spec leaves out are its preset's and the engine's defaults.
 */
export function engineModelAndTask(spec: JobSpec) {
  const m = spec.workflow.model;
  const t = spec.workflow.task;
  const p = presetSizes[m.preset];
  const sized = [m.dModel, m.layers, m.heads, m.contextLength].some((v) => v !== undefined);
  return {
    /** The preset it was built from, where it set no size. */
    preset: sized ? null : m.preset,
    model: {
      dModel: m.dModel ?? p.dModel,
      layers: m.layers ?? p.layers,
      heads: m.heads ?? p.heads,
      contextLength: m.contextLength ?? p.contextLength,
    },
    task: {
      name: t.name,
      digits: t.digits ?? taskDefaults.digits,
      minLength: t.minLength ?? taskDefaults.minLength,
      maxLength: t.maxLength ?? taskDefaults.maxLength,
    },
    seed: t.seed ?? defaultSeed,
  };
}

/**
 * Where a spec with an `initialCheckpoint` asks for another task or model than the checkpoint's.
 * The worker rebuilds a resumed engine from the checkpoint alone (`Engine.fromCheckpoint`), so such
 * a job would train the checkpoint's task and model while its spec says otherwise. `stated` is the
 * workflow as submitted (before defaults): only what the spec sets can contradict; `source` is the
 * spec of the job whose engine the checkpoint was first saved from (no initialCheckpoint of its own).
 */
export function initialCheckpointConflict(
  stated: JobSpecInput['workflow'],
  source: JobSpec,
): { param: string; message: string } | null {
  const ran = engineModelAndTask(source);
  const task = ran.task;
  // Only the sizes the task's generator reads: the others make no difference to the job.
  const taskOff = (['name', ...taskSizesUsed[task.name]] as const).find(
    (f) => stated.task[f] !== undefined && stated.task[f] !== task[f],
  );
  if (taskOff) {
    const sizes = taskSizesUsed[task.name].map((f) => `${f} ${task[f]}`).join(', ');
    return {
      param: `workflow.task.${taskOff}`,
      message:
        `initialCheckpoint's job ran the ${task.name} task (${sizes}): set workflow.task to it or ` +
        'leave the checkpoint out',
    };
  }
  // The learner restores the checkpoint's random state (Engine.fromCheckpoint), which another seed
  // cannot change: refused like a size, or the job would say a seed it does not run.
  const seed = stated.task.seed;
  if (seed !== undefined && seed !== ran.seed) {
    return {
      param: 'workflow.task.seed',
      message:
        `initialCheckpoint's job ran seed ${ran.seed}, whose random state the job continues: set ` +
        'workflow.task.seed to it or leave it out',
    };
  }
  const m = stated.model ?? {};
  for (const f of ['dModel', 'layers', 'heads', 'contextLength'] as const) {
    // A named preset states its dModel, layers and heads; the context is the engine's one default,
    // the same for every preset, so a preset alone does not state it.
    const fromPreset = m.preset !== undefined && f !== 'contextLength' ? presetSizes[m.preset][f] : undefined;
    const asked = m[f] ?? fromPreset;
    if (asked === undefined || asked === ran.model[f]) continue;
    const sizes = Object.entries(ran.model)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    const which = ran.preset ? `the ${ran.preset} model` : 'a model';
    return {
      param: `workflow.model.${m[f] !== undefined ? f : 'preset'}`,
      message: `initialCheckpoint's job ran ${which} (${sizes}): set workflow.model to it or leave it out`,
    };
  }
  return null;
}

/**
 * The spec stored for a job started from a checkpoint: `spec` with the model and task the job runs,
 * those of `source` (the chain's first job, as for `initialCheckpointConflict`), with every size
 * stated. Everything that reads the stored spec sees the job that runs: the API and what shows it,
 * the scheduler's planner (which sizes a job from its model), the worker's engines and the meta of
 * the job's checkpoints. A task's sizes it does not read are left out: they make no difference.
 */
export function checkpointSpec(spec: JobSpec, source: JobSpec): JobSpec {
  const ran = engineModelAndTask(source);
  const task: JobSpec['workflow']['task'] = { name: ran.task.name };
  for (const f of taskSizesUsed[ran.task.name]) task[f] = ran.task[f];
  task.seed = ran.seed;
  return {
    ...spec,
    workflow: {
      ...spec.workflow,
      // Sizes stated even where the source named a preset alone: a reader need not know the presets.
      model: { preset: source.workflow.model.preset, ...ran.model },
      task,
    },
  };
}
