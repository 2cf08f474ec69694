import { z } from 'zod';
import { baseConfigSchema, databaseConfigShape, nodeLivenessShape, parseConfig } from '../common/config.js';
import { defaultPolicy } from './core/policy.js';
import type { Policy } from './core/types.js';

const schema = baseConfigSchema
  .extend(databaseConfigShape)
  .extend(nodeLivenessShape)
  .extend({
    TIMESHARE_MAX_JOBS_PER_DEVICE: z.coerce
      .number()
      .int()
      .min(1)
      .max(64)
      .default(defaultPolicy.maxJobsPerDevice),
    /** A round runs at least this often (and at once when woken by a submission or a change). */
    TIMESHARE_ROUND_INTERVAL_MS: z.coerce.number().int().min(50).max(60_000).default(1000),
    /** The leader's lease: a standby takes over at most this long after the leader died. */
    TIMESHARE_LEADER_LEASE_MS: z.coerce.number().int().min(500).max(60_000).default(5000),
    TIMESHARE_MIN_RUN_SECONDS: z.coerce.number().min(0).default(defaultPolicy.minRunSeconds),
    TIMESHARE_PREEMPT_GRACE_SECONDS: z.coerce.number().min(0).default(defaultPolicy.preemptGraceSeconds),
    TIMESHARE_AGING_BOUND_SECONDS: z.coerce.number().min(1).default(defaultPolicy.agingBoundSeconds),
    TIMESHARE_USAGE_HALF_LIFE_HOURS: z.coerce.number().min(0).default(168),
    TIMESHARE_MAX_GROUP_LOAD: z.coerce.number().min(0.1).max(16).default(defaultPolicy.maxGroupLoad),
    TIMESHARE_MAX_SWITCH_FRACTION: z.coerce.number().min(0).max(1).default(defaultPolicy.maxSwitchFraction),
    TIMESHARE_PREEMPTION: z.enum(['on', 'off']).default('on'),
    TIMESHARE_REPLANNING: z.enum(['on', 'off']).default('on'),
    TIMESHARE_LEND_RESERVED_DEVICES: z.enum(['on', 'off']).default('on'),
    TIMESHARE_COMPACTION: z.enum(['on', 'off']).default('on'),
    TIMESHARE_PROTECT_OWNER_DEVICES: z.enum(['on', 'off']).default('off'),
    TIMESHARE_COMPACT_INTO_GROUPS: z.enum(['on', 'off']).default('on'),
    /** Once nobody waits, jobs slowed by their time-share partners move to free devices (spread.ts). */
    TIMESHARE_SPREAD_WHEN_IDLE: z.enum(['on', 'off']).default(defaultPolicy.spreadWhenIdle ? 'on' : 'off'),
    /** Seconds a job of a tenant under its entitlement waits before a node is cleared for it with reclaimed destinations; off = never. */
    TIMESHARE_RECLAIM_COMPACTION_AFTER_SECONDS: z
      .union([z.literal('off'), z.coerce.number().min(0)])
      .default(defaultPolicy.reclaimCompactionAfterSeconds ?? 'off'),
    /** Port of this process's Prometheus endpoint (GET /metrics); 0 = off. */
    TIMESHARE_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  });

export type SchedulerConfig = Readonly<z.output<typeof schema>>;

export function loadSchedulerConfig(env: NodeJS.ProcessEnv = process.env): SchedulerConfig {
  return parseConfig(schema, env);
}

/** The round's policy from the configuration. */
export function policyFrom(config: SchedulerConfig): Policy {
  return {
    ...defaultPolicy,
    maxJobsPerDevice: config.TIMESHARE_MAX_JOBS_PER_DEVICE,
    maxGroupLoad: config.TIMESHARE_MAX_GROUP_LOAD,
    maxSwitchFraction: config.TIMESHARE_MAX_SWITCH_FRACTION,
    preemption: config.TIMESHARE_PREEMPTION === 'on',
    replanning: config.TIMESHARE_REPLANNING === 'on',
    lendReservedDevices: config.TIMESHARE_LEND_RESERVED_DEVICES === 'on',
    compaction: config.TIMESHARE_COMPACTION === 'on',
    protectOwnerDevices: config.TIMESHARE_PROTECT_OWNER_DEVICES === 'on',
    compactIntoGroups: config.TIMESHARE_COMPACT_INTO_GROUPS === 'on',
    spreadWhenIdle: config.TIMESHARE_SPREAD_WHEN_IDLE === 'on',
    reclaimCompactionAfterSeconds:
      config.TIMESHARE_RECLAIM_COMPACTION_AFTER_SECONDS === 'off'
        ? null
        : config.TIMESHARE_RECLAIM_COMPACTION_AFTER_SECONDS,
    minRunSeconds: config.TIMESHARE_MIN_RUN_SECONDS,
    preemptGraceSeconds: config.TIMESHARE_PREEMPT_GRACE_SECONDS,
    agingBoundSeconds: config.TIMESHARE_AGING_BOUND_SECONDS,
  };
}
