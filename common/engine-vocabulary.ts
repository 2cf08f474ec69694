/**
 * What the engine (native/) knows how to run, declared once: the job spec accepts exactly these
 * (common/job-spec.ts) and the engine's option parser checks against the same lists
 * (native/options.ts), so a task, algorithm or model preset cannot exist in one and not the other.
 */
export const taskNames = ['addition', 'reversal', 'sorting'] as const;
export const algorithms = ['grpo', 'ppo', 'reinforce_is'] as const;
export const modelPresets = ['micro', 'tiny', 'small'] as const;

/**
 * Each preset's sizes, as the engine builds them (native/src/model/config.cc; a test checks the two
 * agree): a spec that sets some sizes gets the rest from its preset, so no field it sets is dropped.
 * The context is the engine's one default, which a spec that sets other sizes but not
 * `contextLength` gets too.
 */
export const presetSizes = {
  micro: { dModel: 32, layers: 1, heads: 2, contextLength: 32 },
  tiny: { dModel: 128, layers: 2, heads: 4, contextLength: 32 },
  small: { dModel: 256, layers: 2, heads: 4, contextLength: 32 },
} as const satisfies Record<
  (typeof modelPresets)[number],
  { dModel: number; layers: number; heads: number; contextLength: number }
>;

/** The task sizes the engine takes where a spec leaves them out (native/options.ts reads these). */
export const taskDefaults = { digits: 2, minLength: 3, maxLength: 6 } as const;

/**
 * The engine's seed where a spec leaves `task.seed` out (native/options.ts reads it): it draws the
 * initial weights and starts the sampling stream.
 */
export const defaultSeed = 1;

/** The sizes each task's generator reads (native/src/tasks/*.cc); it ignores the others. */
export const taskSizesUsed = {
  addition: ['digits'],
  reversal: ['minLength', 'maxLength'],
  sorting: ['minLength', 'maxLength'],
} as const satisfies Record<(typeof taskNames)[number], readonly ('digits' | 'minLength' | 'maxLength')[]>;

/** A task as a spec names it; sizes left out are `taskDefaults`. */
type TaskSizes = {
  name: (typeof taskNames)[number];
  digits?: number;
  minLength?: number;
  maxLength?: number;
};

/**
 * The context (tokens) each task needs: its longest prompt plus its longest answer and `<end>`, as
 * the task generators lay them out (native/src/tasks/*.cc). The engine refuses a shorter context
 * when it is built, which is a job's first run, so the job spec refuses it at submission instead
 * (common/job-spec.ts). A test checks this against the engine for every size a spec allows.
 */
export const taskContextNeeded = {
  // "99+99=" → "198<end>": two operands, "+" and "=", then a sum one digit longer.
  addition: ({ digits = taskDefaults.digits }: TaskSizes) => 2 * digits + 2 + (digits + 1) + 1,
  // "abc=" → "cba<end>"
  reversal: ({ maxLength = taskDefaults.maxLength }: TaskSizes) => maxLength + 1 + maxLength + 1,
  // "3141=" → "1134<end>"
  sorting: ({ maxLength = taskDefaults.maxLength }: TaskSizes) => maxLength + 1 + maxLength + 1,
} as const satisfies Record<(typeof taskNames)[number], (task: TaskSizes) => number>;
