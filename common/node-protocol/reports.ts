/**
 * What a node reports about the jobs placed on it, declared once: the API validates request bodies
 * with these schemas (and documents them from them), the worker builds its requests from the same
 * types. Each number is bounded to what its column holds.
 */
import { z } from '../zod.js';
import { anyText, byteCount, int4, metaSchema, seconds, text, wireNumber } from './fields.js';
import { stageDevicesSchema } from './placement.js';

/**
 * How a job's run on a node ended. `preempted`, `drained`, `lost_contact` and `crashed` return it
 * to the queue. `lost_contact`: the node's daemon lost touch with the control plane for longer than
 * it may speak for its jobs, and its job process stopped itself (worker-node/supervision.ts).
 */
export const nodeOutcomes = [
  'succeeded',
  'failed',
  'preempted',
  'crashed',
  'drained',
  'lost_contact',
] as const;
export type NodeOutcome = (typeof nodeOutcomes)[number];
/** Outcomes that put the job back in the queue rather than ending it. */
export const requeueOutcomes = [
  'preempted',
  'crashed',
  'drained',
  'lost_contact',
] as const satisfies readonly NodeOutcome[];
export type RequeueOutcome = (typeof requeueOutcomes)[number];
export const isRequeueOutcome = (o: NodeOutcome): o is RequeueOutcome =>
  (requeueOutcomes as readonly string[]).includes(o);

/**
 * The run a report speaks for: the `queueSeq` of the assignment that started it. Every return to
 * the queue bumps the job's `queue_seq`, so a late report of an earlier run (even of the same job
 * on the same node, placed there again) no longer matches and is refused like a report from a node
 * that lost the job, instead of moving or charging the run placed now.
 */
export const runSeq = () => int4();

/**
 * The report's number in its run: 1, 2, … in the order the node puts its reports and checkpoint
 * records in its outbox, fixed there, so a resend (the API committed it but its answer was lost)
 * carries the same number. The outbox sends a run's reports in order (a batch skips a job's records
 * after one of its own that failed, report-batch.ts), so the API keeps only the newest number it
 * applied per run and answers a report numbered no higher as applied without applying it again: no
 * second checkpoint event, no device-seconds counted twice.
 */
export const reportSeq = () => int4(1);

export const jobStartSchema = z
  .strictObject({ queueSeq: runSeq(), resumedFromStep: int4().nullable().default(null) })
  .openapi('JobStart');
export type JobStart = z.output<typeof jobStartSchema>;

export const metricPointSchema = z.strictObject({
  step: int4(),
  name: text(128),
  /** `"NaN"`, `"Infinity"` and `"-Infinity"` for what JSON cannot write (node protocol 2). */
  value: wireNumber(),
});
/** A metric point as it is sent: non-finite values by name. */
export type WireMetricPoint = z.output<typeof metricPointSchema>;
/** A metric point as a job process measures it. */
export type MetricPoint = Omit<WireMetricPoint, 'value'> & { value: number };

export const stageProfileSchema = z.strictObject({
  stage: text(64),
  step: int4().nullable().default(null),
  seconds: seconds(),
  tokens: int4().default(0),
  batch: int4().default(0),
  devices: int4(1).default(1),
  peakBytes: byteCount().default(0),
  onloadSeconds: seconds().default(0),
  offloadSeconds: seconds().default(0),
  /**
   * Seconds of the hold the engine measured computing (its profile), or the stage's own run time
   * where the engine keeps no profile (a checkpoint, a weight sync); null when unknown. The rest of
   * the hold, less onload and offload, is idle-held time (device-time.ts).
   */
  computeSeconds: seconds().nullable().default(null),
  /**
   * Generation: the mean share of the call's sequences still decoding per decoding step (1: none
   * waited for stragglers); the rest is the tail the planner's cost model takes out. Null elsewhere.
   */
  occupancy: z.number().min(0).max(1).nullable().default(null),
  /**
   * Generation: the call stopped early for partial rollouts, once at most this share of its prompt
   * groups was unfinished (the rest carried into the next call), so its seconds hold only what was
   * left of the stragglers' tail and its occupancy measures that. Null: the call ran to its end.
   */
  partialTail: z.number().min(0).max(0.5).nullable().default(null),
});
export type StageProfileReport = z.output<typeof stageProfileSchema>;

/** How many devices generate and how many train in a spatial or hybrid placement. */
export const stageSplitSchema = z.strictObject({ generate: int4(1), train: int4(1) });
export type StageSplit = z.output<typeof stageSplitSchema>;

/**
 * The worker's reactive balancer moved a device between generation and training inside the job's
 * own placement (worker-node/balancer.ts). `stages` is the new per-stage device map, which the
 * control plane records in the placement (it must cover the placement's devices exactly: a node
 * moves devices within what it was given, never more).
 */
export const jobRebalancedSchema = z.strictObject({
  type: z.literal('job.rebalanced'),
  /** The last completed step when the move was taken (it applies from the next one). */
  step: int4(),
  from: stageSplitSchema,
  to: stageSplitSchema,
  stages: stageDevicesSchema,
  /** The imbalance score that triggered it: > 0 generation over-loaded, < 0 training (−1…1). */
  imbalance: z.number().min(-1).max(1),
  /** Mean wall seconds per step over the window measured before the move. */
  stepSecondsBefore: seconds(),
  /** The balancer's prediction for the step after the move (service times scaled by devices). */
  predictedStepSeconds: seconds(),
  /** Measured cost of the move: the generator paused and both engines restarted on the new sets. */
  moveSeconds: seconds(),
});

/** The step time measured after a move, once the balancer's window after it has run. */
export const jobRebalanceMeasuredSchema = z.strictObject({
  type: z.literal('job.rebalance_measured'),
  step: int4(),
  split: stageSplitSchema,
  stepSecondsBefore: seconds(),
  stepSecondsAfter: seconds(),
  /** The imbalance score measured after the move. */
  imbalance: z.number().min(-1).max(1),
});

/** Job events a node may report (each becomes a `job_events` row of that type). */
export const nodeJobEventSchema = z
  .discriminatedUnion('type', [jobRebalancedSchema, jobRebalanceMeasuredSchema])
  .openapi('NodeJobEvent');
export type NodeJobEvent = z.output<typeof nodeJobEventSchema>;
export const nodeJobEventTypes = ['job.rebalanced', 'job.rebalance_measured'] as const;

export const jobReportSchema = z
  .strictObject({
    queueSeq: runSeq(),
    reportSeq: reportSeq(),
    metrics: z.array(metricPointSchema).max(10_000).default([]),
    profiles: z.array(stageProfileSchema).max(1000).default([]),
    /** Decisions the worker took inside the job's placement, recorded as job events. */
    events: z.array(nodeJobEventSchema).max(16).default([]),
    /**
     * Device-seconds since the last report. The API records at most what the job's placement could
     * have used: wall time since placement × devices held, less what was already recorded for it.
     */
    deviceSeconds: seconds().default(0),
  })
  .openapi('JobReport');
export type JobReport = z.output<typeof jobReportSchema>;

export const checkpointReportSchema = z
  .strictObject({
    queueSeq: runSeq(),
    reportSeq: reportSeq(),
    step: int4(),
    sizeBytes: byteCount(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    /**
     * Where the node wrote the files. The control plane derives the key from the job and the step
     * (common/storage `checkpointModelKey`) and records that; a node that sends another key is
     * refused, so no node can point a job's record at another job's (or tenant's) files.
     */
    storageKey: text(512).optional(),
    meta: metaSchema.default({}),
  })
  .openapi('CheckpointReport');
export type CheckpointReport = z.output<typeof checkpointReportSchema>;
/** A checkpoint as a job process reports it: its daemon adds the run and the report's number. */
export type SavedCheckpoint = Omit<CheckpointReport, 'queueSeq' | 'reportSeq'>;

/**
 * Why a run that succeeded ended where it did: it ran all its `workflow.steps` (`steps_completed`),
 * or the stopping rule ended it early, at its `targetReward` (the last 3 steps' mean reward) or its
 * `targetAccuracy` (the held-out evaluation). A tenant saw "succeeded, step 10 of 300" and could not
 * tell a job that met its target from one that stopped short.
 */
export const finishReasons = ['steps_completed', 'target_reward', 'target_accuracy'] as const;
export type FinishReason = (typeof finishReasons)[number];

export const jobFinishSchema = z
  .strictObject({
    queueSeq: runSeq(),
    outcome: z.enum(nodeOutcomes),
    error: anyText(4000).nullable().default(null),
    /** Node protocol 3; absent (an older daemon) is null: the reason is not known. */
    reason: z
      .enum(finishReasons)
      .nullable()
      .default(null)
      .openapi({
        description:
          'For `succeeded`: why the run ended where it did (`steps_completed`: all of `workflow.steps`; ' +
          '`target_reward`, `target_accuracy`: the stopping rule met the target first). Null when unknown; ' +
          'ignored for other outcomes',
      }),
    /** Node protocol 4; absent (an older daemon) is null. */
    endedAt: z.iso
      .datetime()
      .nullable()
      .default(null)
      .openapi({
        description:
          "When the run ended, by the node's clock; the outcome's events carry it as `runEndedAt` " +
          '(a report kept in the outbox while the API was away arrives later). Null when unknown',
      }),
  })
  .openapi('JobFinish');
/** A finish as a daemon sends it: `reason` where it knows one (a record written by an older daemon has none). */
export type JobFinish = Omit<z.output<typeof jobFinishSchema>, 'reason' | 'endedAt'> & {
  reason?: FinishReason | null;
  endedAt?: string | null;
};

export const appliedSchema = z.object({ applied: z.boolean() });
