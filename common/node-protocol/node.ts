/** A daemon's registration and heartbeats. */
import { z } from '../zod.js';
import { poolNameSchema } from '../job-spec.js';
import { anyText, byteCount, text } from './fields.js';

export const registerNodeSchema = z
  .strictObject({
    name: text(128),
    pool: poolNameSchema.default('default'),
    deviceType: text(64).default('cpu-virtual'),
    labels: z
      .record(text(128), anyText(1024))
      .refine((l) => Object.keys(l).length <= 64, 'at most 64 labels')
      .default({}),
    devices: z
      .array(
        z.strictObject({
          index: z.number().int().min(0).max(1023),
          kind: text(64),
          memoryBytes: byteCount(),
          freeMemoryBytes: byteCount(),
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
    devices: z
      .array(z.strictObject({ index: z.number().int().min(0).max(1023), freeMemoryBytes: byteCount() }))
      .max(1024),
  })
  .openapi('Heartbeat');
export type Heartbeat = z.output<typeof heartbeatSchema>;
