/**
 * What a node reports about the jobs placed on it, declared once: the API validates request bodies
 * with these schemas (and documents them from them), the worker builds its requests from the same
 * types. Each number is bounded to what its column holds.
 */
import { z } from '../zod.js';

const INT4_MAX = 2_147_483_647;

/** How a job's run on a node ended. `preempted`, `drained` and `crashed` return it to the queue. */
export const nodeOutcomes = ['succeeded', 'failed', 'preempted', 'crashed', 'drained'] as const;
export type NodeOutcome = (typeof nodeOutcomes)[number];
/** Outcomes that put the job back in the queue rather than ending it. */
export const requeueOutcomes = ['preempted', 'crashed', 'drained'] as const satisfies readonly NodeOutcome[];
export type RequeueOutcome = (typeof requeueOutcomes)[number];
export const isRequeueOutcome = (o: NodeOutcome): o is RequeueOutcome =>
  (requeueOutcomes as readonly string[]).includes(o);

export const jobStartSchema = z
  .strictObject({ resumedFromStep: z.number().int().min(0).max(INT4_MAX).nullable().default(null) })
  .openapi('JobStart');

export const metricPointSchema = z.strictObject({
  step: z.number().int().min(0).max(INT4_MAX),
  name: z.string().min(1).max(128),
  value: z.number(),
});
export type MetricPoint = z.output<typeof metricPointSchema>;

export const stageProfileSchema = z.strictObject({
  stage: z.string().min(1).max(64),
  step: z.number().int().min(0).max(INT4_MAX).nullable().default(null),
  seconds: z.number().min(0),
  tokens: z.number().int().min(0).max(INT4_MAX).default(0),
  batch: z.number().int().min(0).max(INT4_MAX).default(0),
  devices: z.number().int().min(1).max(INT4_MAX).default(1),
  peakBytes: z.number().int().min(0).default(0),
  onloadSeconds: z.number().min(0).default(0),
  offloadSeconds: z.number().min(0).default(0),
});
export type StageProfileReport = z.output<typeof stageProfileSchema>;

export const jobReportSchema = z
  .strictObject({
    metrics: z.array(metricPointSchema).max(10_000).default([]),
    profiles: z.array(stageProfileSchema).max(1000).default([]),
    deviceSeconds: z.number().min(0).default(0),
  })
  .openapi('JobReport');
export type JobReport = z.output<typeof jobReportSchema>;

export const checkpointReportSchema = z
  .strictObject({
    step: z.number().int().min(0).max(INT4_MAX),
    sizeBytes: z.number().int().min(0),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    storageKey: z
      .string()
      .min(1)
      .max(512)
      .refine((k) => !k.split('/').includes('..') && !k.startsWith('/'), 'must stay inside the storage root'),
    meta: z.record(z.string(), z.unknown()).default({}),
  })
  .openapi('CheckpointReport');
export type CheckpointReport = z.output<typeof checkpointReportSchema>;

export const jobFinishSchema = z
  .strictObject({
    outcome: z.enum(nodeOutcomes),
    error: z.string().max(4000).nullable().default(null),
  })
  .openapi('JobFinish');
export type JobFinish = z.output<typeof jobFinishSchema>;

export const appliedSchema = z.object({ applied: z.boolean() });
