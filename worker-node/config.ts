/**
 * The worker daemon's configuration: environment for where the control plane is and the node's
 * credential; flags for what the node offers. Without GPUs a node offers virtual devices: a thread
 * budget and a memory budget per device, which the engine enforces.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { baseConfigSchema, nodeLivenessShape, parseConfig, storageConfigShape } from '../common/config.js';

const envSchema = baseConfigSchema
  .extend(storageConfigShape)
  .extend(nodeLivenessShape)
  .extend({
    TIMESHARE_API_URL: z.url().default('http://127.0.0.1:8080'),
    TIMESHARE_NODE_KEY: z.string().startsWith('tsn_', 'TIMESHARE_NODE_KEY must be a node key (tsn_…)'),
    TIMESHARE_NODE_NAME: z.string().min(1).max(128).default(os.hostname()),
    TIMESHARE_POOL: z.string().min(1).default('default'),
    TIMESHARE_HEARTBEAT_MS: z.coerce.number().int().min(100).default(5000),
    TIMESHARE_ASSIGNMENT_POLL_MS: z.coerce.number().int().min(100).default(2000),
    TIMESHARE_LEASE_MS: z.coerce.number().int().min(500).default(10_000),
    TIMESHARE_DRAIN_TIMEOUT_MS: z.coerce.number().int().min(1000).default(60_000),
    /** Where checkpoint records and outcomes wait while the API is unreachable (default .data/outbox/<node name>). */
    TIMESHARE_OUTBOX_DIR: z.string().min(1).optional(),
    /** Keep one job process forked ahead of the next job (worker-node/spare-runner.ts). */
    TIMESHARE_SPARE_RUNNER: z.enum(['on', 'off']).default('on'),
    /** The reactive balancer of spatial jobs (worker-node/balancer.ts, docs/planner.md). */
    TIMESHARE_BALANCER: z.enum(['on', 'off']).default('on'),
    /** |imbalance| (−1…1) past which it moves a device between generation and training. */
    TIMESHARE_BALANCER_THRESHOLD: z.coerce.number().min(0.05).max(1).default(0.25),
    /** Port of the daemon's Prometheus endpoint (GET /metrics); 0 = off. */
    TIMESHARE_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  });

const flagsSchema = z.object({
  /** null: discover GPUs with nvidia-smi, else fall back to 2 virtual devices. */
  virtualDevices: z.coerce.number().int().min(1).max(64).nullable(),
  deviceMemory: z.coerce
    .number()
    .int()
    .min(1 << 20),
  threadsPerDevice: z.coerce.number().int().min(1).max(256),
});

export type WorkerConfig = Readonly<z.output<typeof envSchema> & z.output<typeof flagsSchema>>;

export function loadWorkerConfig(
  argv = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): WorkerConfig {
  const { values } = parseArgs({
    args: argv,
    options: {
      'virtual-devices': { type: 'string' },
      'device-memory': { type: 'string', default: String(512 * 1024 * 1024) },
      'threads-per-device': { type: 'string', default: '1' },
    },
    strict: true,
  });
  // Three heartbeats per node timeout at least: with fewer, the daemon stops speaking for its node
  // between two accepted heartbeats, and its job processes stop though it is alive (supervision.ts).
  const schema = envSchema
    .extend(flagsSchema.shape)
    .refine((c) => c.TIMESHARE_NODE_TIMEOUT_MS >= 3 * c.TIMESHARE_HEARTBEAT_MS, {
      path: ['TIMESHARE_NODE_TIMEOUT_MS'],
      message: 'must be at least 3 × TIMESHARE_HEARTBEAT_MS',
    });
  return parseConfig(schema, {
    ...env,
    virtualDevices: values['virtual-devices'] ?? null,
    deviceMemory: values['device-memory'],
    threadsPerDevice: values['threads-per-device'],
  });
}
