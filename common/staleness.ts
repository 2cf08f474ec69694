/**
 * The weight lag a learner actually trains on: for every generated token, the learner's weight
 * version at the moment it trains minus the version the token was sampled under. Generation may
 * run ahead of training by up to `maxWeightLag` steps, so this — not the lag seen when generation
 * ended — is what the bound is about and what the off-policy correction has to absorb.
 */
export interface Staleness {
  max: number;
  /** Sum of the lags of all generated tokens, and their count: the mean is sum / tokens. */
  sum: number;
  tokens: number;
  /** Generated tokens sampled under older weights than the learner's. */
  offPolicy: number;
}

export const noStaleness = (): Staleness => ({ max: 0, sum: 0, tokens: 0, offPolicy: 0 });

/** `versions` holds one weight version per token position; prompt and padding positions hold −1. */
export function stalenessOf(learnerVersion: number, versions: ArrayLike<number>): Staleness {
  const s = noStaleness();
  for (let i = 0; i < versions.length; i++) {
    const v = versions[i]!;
    if (v < 0) continue;
    const lag = Math.max(0, learnerVersion - v);
    s.tokens++;
    s.sum += lag;
    if (lag > 0) s.offPolicy++;
    if (lag > s.max) s.max = lag;
  }
  return s;
}

export function addStaleness(a: Staleness, b: Staleness): Staleness {
  return {
    max: Math.max(a.max, b.max),
    sum: a.sum + b.sum,
    tokens: a.tokens + b.tokens,
    offPolicy: a.offPolicy + b.offPolicy,
  };
}

/** A step's metrics; `weight_version_lag` keeps its name and means the maximum. */
export function stalenessMetrics(step: number, s: Staleness) {
  return [
    { step, name: 'weight_version_lag', value: s.max },
    { step, name: 'weight_version_lag_max', value: s.max },
    { step, name: 'weight_version_lag_mean', value: s.tokens ? s.sum / s.tokens : 0 },
    { step, name: 'off_policy_token_fraction', value: s.tokens ? s.offPolicy / s.tokens : 0 },
  ];
}
