/**
 * The worker daemon's configuration: environment for where the control plane is and the node's
 * credential; flags for what the node offers. Without GPUs a node offers virtual devices: a thread
 * budget and a memory budget per device, which the engine enforces.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import {
  baseConfigSchema,
  ConfigError,
  nodeLivenessShape,
  parseConfig,
  storageConfigShape,
} from '../common/config.js';
import { millis, nonBlank, numberIn, onOff, port, required, urlOf } from '../common/config-values.js';
import { poolNameSchema } from '../common/job-spec.js';
import { metricsHostShape } from '../common/metrics/serve.js';
import { DEFAULT_RETRY_DELAYS_MS } from './control-plane-client.js';

const retryDelay = numberIn({ min: 0, max: 60_000 });

/** How long SIGTERM waits for jobs to checkpoint; `npm start` waits this and 15 s more before SIGKILL. */
export const drainTimeoutSchema = millis(1000).default(60_000);

export const workerEnvSchema = baseConfigSchema
  .extend(storageConfigShape)
  .extend(nodeLivenessShape)
  .extend({
    TIMESHARE_API_URL: urlOf('http:', 'https:').default('http://127.0.0.1:8080'),
    TIMESHARE_NODE_KEY: required('a node key (tsn_…, POST /v1/node-keys)').startsWith(
      'tsn_',
      'must be a node key (tsn_…)',
    ),
    TIMESHARE_NODE_NAME: nonBlank().max(128, 'must be at most 128 characters').default(os.hostname()),
    // The API refuses a registration under any other pool name: refused here, at start, instead.
    TIMESHARE_POOL: z
      .string()
      .refine((v) => poolNameSchema.safeParse(v).success, {
        message: 'must be a pool name: up to 64 lowercase letters, digits and "-", not starting with "-"',
      })
      .default('default'),
    TIMESHARE_HEARTBEAT_MS: millis(100).default(5000),
    TIMESHARE_ASSIGNMENT_POLL_MS: millis(100).default(2000),
    TIMESHARE_LEASE_MS: millis(500).default(10_000),
    TIMESHARE_DRAIN_TIMEOUT_MS: drainTimeoutSchema,
    /** Delays between the tries of one request to the API (control-plane-client.ts). */
    TIMESHARE_API_RETRY_MS: z
      .string()
      .transform((raw, ctx) => {
        const parts = raw.split(',').map((p) => retryDelay.safeParse(p.trim()));
        if (parts.length <= 20 && parts.every((p) => p.success)) return parts.map((p) => p.data!);
        ctx.addIssue({
          code: 'custom',
          message: 'must be 1 to 20 comma-separated delays in milliseconds, each an integer from 0 to 60000',
        });
        return z.NEVER;
      })
      .default([...DEFAULT_RETRY_DELAYS_MS]),
    /** Where checkpoint records and outcomes wait while the API is unreachable (default .data/outbox/<node name>). */
    TIMESHARE_OUTBOX_DIR: nonBlank().optional(),
    /** Keep one job process forked ahead of the next job (worker-node/spare-runner.ts). */
    TIMESHARE_SPARE_RUNNER: onOff('on'),
    /** The reactive balancer of spatial jobs (worker-node/balancer.ts, docs/planner.md). */
    TIMESHARE_BALANCER: onOff('on'),
    /** |imbalance| (−1…1) past which it moves a device between generation and training. */
    TIMESHARE_BALANCER_THRESHOLD: numberIn({ min: 0.05, max: 1, fraction: true }).default(0.25),
    /** Port of the daemon's Prometheus endpoint (GET /metrics); 0 = off. */
    TIMESHARE_METRICS_PORT: port().default(0),
    ...metricsHostShape,
  });

const flagsSchema = z.object({
  /** null: discover GPUs with nvidia-smi, else fall back to 2 virtual devices. */
  virtualDevices: numberIn({ min: 1, max: 64 }).nullable(),
  deviceMemory: numberIn({ min: 1 << 20, max: Number.MAX_SAFE_INTEGER }),
  threadsPerDevice: numberIn({ min: 1, max: 256 }),
});

export type WorkerConfig = Readonly<z.output<typeof workerEnvSchema> & z.output<typeof flagsSchema>>;

export function loadWorkerConfig(
  argv = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): WorkerConfig {
  const values = parseFlags(argv);
  // Three heartbeats per node timeout at least: with fewer, the daemon stops speaking for its node
  // between two accepted heartbeats, and its job processes stop though it is alive (supervision.ts).
  const schema = workerEnvSchema
    .extend(flagsSchema.shape)
    .refine((c) => c.TIMESHARE_NODE_TIMEOUT_MS >= 3 * c.TIMESHARE_HEARTBEAT_MS, {
      path: ['TIMESHARE_NODE_TIMEOUT_MS'],
      message: 'must be at least 3 × TIMESHARE_HEARTBEAT_MS',
    });
  return parseConfig(
    schema,
    {
      ...env,
      virtualDevices: values['virtual-devices'] ?? null,
      deviceMemory: values['device-memory'],
      threadsPerDevice: values['threads-per-device'],
    },
    {
      virtualDevices: '--virtual-devices',
      deviceMemory: '--device-memory',
      threadsPerDevice: '--threads-per-device',
    },
  );
}

/** The daemon's flags; an unknown flag or a missing value is refused like a bad variable. */
function parseFlags(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: {
        'virtual-devices': { type: 'string' },
        'device-memory': { type: 'string', default: String(512 * 1024 * 1024) },
        'threads-per-device': { type: 'string', default: '1' },
      },
      strict: true,
    }).values;
  } catch (err) {
    throw new ConfigError([`flags: ${(err as Error).message.replace(/\n/g, ' ')}`]);
  }
}
