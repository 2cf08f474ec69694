/** A daemon's registration and heartbeats. */
import { z } from '../zod.js';
import { poolNameSchema } from '../job-spec.js';

/** PostgreSQL text cannot hold NUL; refuse it at the edge rather than fail in the database. */
const text = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((s) => !s.includes('\u0000'), 'must not contain NUL characters');

export const registerNodeSchema = z
  .strictObject({
    name: text(128),
    pool: poolNameSchema.default('default'),
    deviceType: text(64).default('cpu-virtual'),
    labels: z.record(text(128), z.string().max(1024)).default({}),
    devices: z
      .array(
        z.strictObject({
          index: z.number().int().min(0).max(1023),
          kind: text(64),
          memoryBytes: z.number().int().min(0),
          freeMemoryBytes: z.number().int().min(0),
          threads: z.number().int().min(1).max(1024).default(1),
        }),
      )
      .min(1)
      .max(1024),
  })
  .openapi('RegisterNode');
export type RegisterNode = z.input<typeof registerNodeSchema>;

export const heartbeatSchema = z
  .strictObject({
    devices: z.array(
      z.strictObject({ index: z.number().int().min(0).max(1023), freeMemoryBytes: z.number().int().min(0) }),
    ),
  })
  .openapi('Heartbeat');
export type Heartbeat = z.output<typeof heartbeatSchema>;
