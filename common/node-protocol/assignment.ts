/** What a node is told to run: `GET /v1/nodes/{id}/assignments` returns a list of these. */
import { z } from '../zod.js';
import { placementSchema } from './placement.js';

export const resumePointSchema = z.object({
  checkpointId: z.uuid(),
  step: z.number().int().min(0),
  storageKey: z.string(),
  /** false when resuming from another job's checkpoint (the spec's initialCheckpoint): steps restart at 0. */
  fromOwnRun: z.boolean(),
});

export const assignmentSchema = z
  .object({
    jobId: z.uuid(),
    tenantId: z.uuid(),
    status: z.enum(['placed', 'running']),
    /** The job spec as submitted (validated at submission; see common/job-spec.ts). */
    spec: z.record(z.string(), z.unknown()),
    placement: placementSchema,
    attempts: z.number().int().min(0),
    maxAttempts: z.number().int().min(1),
    priority: z.number().int(),
    queueSeq: z.number().int().min(0),
    resumeFrom: resumePointSchema.nullable(),
    /** Set when the scheduler asked the job to checkpoint and give its devices back (preemption notice). */
    preemptRequestedAt: z.iso.datetime().nullable().default(null),
  })
  .openapi('Assignment');
export type AssignmentWire = z.output<typeof assignmentSchema>;
