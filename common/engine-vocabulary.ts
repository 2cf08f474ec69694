/**
 * What the engine (native/) knows how to run, declared once: the job spec accepts exactly these
 * (common/job-spec.ts) and the engine's option parser checks against the same lists
 * (native/options.ts), so a task, algorithm or model preset cannot exist in one and not the other.
 */
export const taskNames = ['addition', 'reversal', 'sorting'] as const;
export const algorithms = ['grpo', 'ppo', 'reinforce_is'] as const;
export const modelPresets = ['micro', 'tiny', 'small'] as const;
