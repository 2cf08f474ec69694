import type { z } from 'zod';
import { baseConfigSchema, databaseConfigShape, nodeLivenessShape, parseConfig } from '../common/config.js';
import { millis, numberIn, offOr, onOff, port, YEAR_HOURS, YEAR_SECONDS } from '../common/config-values.js';
import { defaultPolicy } from './core/policy.js';
import type { Policy } from './core/types.js';
import { metricsHostShape } from '../common/metrics/serve.js';

/** Seconds of a policy (run times, grace, waits): up to a year. */
const seconds = (min: number) => numberIn({ min, max: YEAR_SECONDS, fraction: true });
const switchOf = (on: boolean) => onOff(on ? 'on' : 'off');

export const schedulerConfigSchema = baseConfigSchema
  .extend(databaseConfigShape)
  .extend(nodeLivenessShape)
  .extend({
    TIMESHARE_MAX_JOBS_PER_DEVICE: numberIn({ min: 1, max: 64 }).default(defaultPolicy.maxJobsPerDevice),
    /** A round runs at least this often (and at once when woken by a submission or a change). */
    TIMESHARE_ROUND_INTERVAL_MS: millis(50, 60_000).default(1000),
    /** The leader's lease: a standby takes over at most this long after the leader died. */
    TIMESHARE_LEADER_LEASE_MS: millis(500, 60_000).default(5000),
    TIMESHARE_MIN_RUN_SECONDS: seconds(0).default(defaultPolicy.minRunSeconds),
    TIMESHARE_PREEMPT_GRACE_SECONDS: seconds(0).default(defaultPolicy.preemptGraceSeconds),
    TIMESHARE_AGING_BOUND_SECONDS: seconds(1).default(defaultPolicy.agingBoundSeconds),
    /** 0: no memory of past usage (usage-decay.ts). */
    TIMESHARE_USAGE_HALF_LIFE_HOURS: numberIn({ min: 0, max: YEAR_HOURS, fraction: true }).default(168),
    TIMESHARE_MAX_GROUP_LOAD: numberIn({ min: 0.1, max: 16, fraction: true }).default(
      defaultPolicy.maxGroupLoad,
    ),
    TIMESHARE_MAX_SWITCH_FRACTION: numberIn({ min: 0, max: 1, fraction: true }).default(
      defaultPolicy.maxSwitchFraction,
    ),
    TIMESHARE_PREEMPTION: switchOf(defaultPolicy.preemption),
    TIMESHARE_REPLANNING: switchOf(defaultPolicy.replanning),
    TIMESHARE_LEND_RESERVED_DEVICES: switchOf(defaultPolicy.lendReservedDevices),
    TIMESHARE_COMPACTION: switchOf(defaultPolicy.compaction),
    TIMESHARE_PROTECT_OWNER_DEVICES: switchOf(defaultPolicy.protectOwnerDevices),
    TIMESHARE_COMPACT_INTO_GROUPS: switchOf(defaultPolicy.compactIntoGroups),
    /** Once nobody waits, jobs slowed by their time-share partners move to free devices (spread.ts). */
    TIMESHARE_SPREAD_WHEN_IDLE: switchOf(defaultPolicy.spreadWhenIdle),
    /** Seconds a job of a tenant under its entitlement waits before a node is cleared for it with reclaimed destinations; off = never. */
    TIMESHARE_RECLAIM_COMPACTION_AFTER_SECONDS: offOr({ min: 0, max: YEAR_SECONDS, fraction: true }).default(
      defaultPolicy.reclaimCompactionAfterSeconds ?? 'off',
    ),
    /** Port of this process's Prometheus endpoint (GET /metrics); 0 = off. */
    TIMESHARE_METRICS_PORT: port().default(0),
    ...metricsHostShape,
  });

export type SchedulerConfig = Readonly<z.output<typeof schedulerConfigSchema>>;

export function loadSchedulerConfig(env: NodeJS.ProcessEnv = process.env): SchedulerConfig {
  return parseConfig(schedulerConfigSchema, env);
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
