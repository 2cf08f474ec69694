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
 */
export const presetSizes = {
  micro: { dModel: 32, layers: 1, heads: 2 },
  tiny: { dModel: 128, layers: 2, heads: 4 },
  small: { dModel: 256, layers: 2, heads: 4 },
} as const satisfies Record<(typeof modelPresets)[number], { dModel: number; layers: number; heads: number }>;
