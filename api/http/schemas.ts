/**
 * Request and response schemas of the REST API besides the job spec (common/job-spec.ts). Request
 * schemas validate; response schemas document (the OpenAPI document is generated from both).
 */
import { z } from '../../common/zod.js';
import { errorCatalogue } from '../../common/errors.js';
import { jobStatuses, waitReasons } from '../../common/job-status.js';
import { jobSpecSchema } from '../../common/job-spec.js';
import { wireNumber } from '../../common/node-protocol/fields.js';
import { finishReasons } from '../../common/node-protocol/reports.js';
import { parseTimelineCursor } from '../../common/device-lock/timeline.js';

export const uuidParam = z.uuid();

/** Text PostgreSQL can store: its text type refuses NUL (a 500 if it reached the database). */
// eslint-disable-next-line no-control-regex -- NUL is exactly what this refuses
export const text = () => z.string().regex(/^[^\u0000]*$/, 'must not contain NUL characters');

const DIGITS = 'expected a whole number, written in digits (once)';

/**
 * A whole number in a query string (or a header), written in digits: `z.coerce.number()` read `abc`
 * as NaN ("expected number, received NaN"), `0x10` as 16, `1e3` as 1000 and an empty value as 0.
 * The OpenAPI document still says integer, with the bounds. Digits out of range say the range: the
 * schema-level `error` of zod 4 also replaces the messages of checks given none of their own.
 */
export const queryInt = (min: number, max: number) => {
  const range = `must be between ${min} and ${max}`;
  return z.preprocess(
    (v) => {
      if (typeof v !== 'string' || !/^\d+$/.test(v)) return v;
      // Digits too many for a double are still digits: out of range, not malformed.
      const n = Number(v);
      return Number.isFinite(n) ? n : Number.MAX_VALUE;
    },
    z.number({ error: DIGITS }).int(DIGITS).min(min, range).max(max, range),
  );
};

/** The largest event id (job_events.id is a bigint). */
export const EVENT_ID_MAX = 2n ** 63n - 1n;

/**
 * An event id as a cursor (`after`, `Last-Event-ID`): a decimal string, as event ids and
 * `nextCursor` are written (64-bit ids do not fit a JSON number), digits only.
 */
export const eventCursor = () =>
  z
    .string({ error: DIGITS })
    .regex(/^\d+$/, DIGITS)
    // Digits past the largest id are out of range, not malformed. Zod runs this after a failed
    // regex too: anything but digits is left to the regex (BigInt would throw, or read `0x10`).
    .refine(
      (v) => !/^\d+$/.test(v) || (v.length <= 40 && BigInt(v) <= EVENT_ID_MAX),
      `must be between 0 and ${EVENT_ID_MAX}`,
    )
    .openapi({ example: '153' });

/** The largest value of an int4 column (steps, counts): bigger ones are a 400, not a database error. */
export const INT4_MAX = 2 ** 31 - 1;
const int4Query = () => queryInt(0, INT4_MAX);

/**
 * A time in milliseconds since the epoch, as a query parameter: at most the last instant a `Date`
 * holds (±8.64e15 ms), so that it can be written back as an ISO time (past it, toISOString throws).
 */
export const MAX_DATE_MS = 8.64e15;
export const epochMsQuery = () => queryInt(0, MAX_DATE_MS);

/** A device-lock timeline page's cursor (common/device-lock/timeline.ts), as a query parameter. */
export const timelineAfter = z
  .string()
  .max(100)
  .refine((v) => parseTimelineCursor(v) !== null, 'not a cursor returned by this API')
  .optional()
  .openapi({ description: 'The `nextCursor` of the previous page' });

export const timelineNextCursor = z.string().nullable().openapi({
  description: 'Where the next page starts (`after`); null when this page reached the newest hold',
});

/** A page of an admin list: `limit` and the `after` cursor a previous page returned. */
export const pageQuery = z
  .strictObject({
    limit: queryInt(1, 100).default(20),
    after: z.string().max(200).optional(),
  })
  .openapi('PageQuery');

/** An optional name for a new API key or node key. */
export const createKeySchema = z
  .strictObject({ name: text().min(1).max(64).optional() })
  .openapi('CreateKey');

export const errorSchema = z
  .object({
    error: z.object({
      type: z.string(),
      // Open: new codes may be added (docs/api.md), and a client generated from a closed enum would
      // refuse an answer carrying one.
      code: z.string().openapi({
        description:
          'Stable machine-readable code; new codes may be added. Known codes: ' +
          Object.entries(errorCatalogue)
            .map(([c, e]) => `\`${c}\` (${e.status})`)
            .join(', '),
        examples: Object.keys(errorCatalogue),
      }),
      message: z.string(),
      param: z.string().nullable(),
    }),
  })
  .openapi('Error');

/**
 * The bounds of a tenant's fair-share weight (scheduler/core/fair-share.ts). A tenant's share of a
 * pool is its dominant fraction divided by its weight, its entitlement its weight's part of the sum:
 * a weight near 0 (1e-9 was taken) made its share, and its decayed usage, near infinite, so its jobs
 * sorted behind everyone's for good and any device it held read as borrowed. 0.01–1000 spans five
 * orders of magnitude between the lightest and heaviest tenant, which keeps shares ≤ 100 and
 * entitlements ≥ 1e-5 of a pool: far from the water-filling's 1e-12 cut-off and float noise.
 */
export const WEIGHT_MIN = 0.01;
export const WEIGHT_MAX = 1000;
const WEIGHT_RANGE = `must be a number between ${WEIGHT_MIN} and ${WEIGHT_MAX}`;

/** A tenant's weight, the one schema of every way to set it (POST/PATCH, so the CLI and dashboard). */
const tenantWeight = () =>
  z
    .number({ error: WEIGHT_RANGE })
    .min(WEIGHT_MIN, WEIGHT_RANGE)
    .max(WEIGHT_MAX, WEIGHT_RANGE)
    .openapi({
      description: `Fair-share weight, ${WEIGHT_MIN} to ${WEIGHT_MAX}: the tenant's part of a pool is in proportion to it`,
    });

export const createTenantSchema = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[a-z0-9][a-z0-9-]*$/, 'lowercase letters, digits and "-"'),
    weight: tenantWeight().default(1),
  })
  .openapi('CreateTenant');

export const updateTenantSchema = z
  .strictObject({
    weight: tenantWeight(),
  })
  .openapi('UpdateTenant');

export const quotaSchema = z
  .object({
    maxActiveJobs: z.number().int(),
    maxConcurrentDevices: z.number().int(),
    maxDevicesPerJob: z.number().int(),
    deviceHoursPerMonth: z.number(),
  })
  .openapi('Quota');

/**
 * A quota value in a body: what is not a number of its kind (null, a string, a fraction where a
 * whole number goes) or out of range says what the field takes, as the weight does, instead of
 * zod's "expected number, received null".
 */
const quotaCount = () => {
  const takes = 'must be a whole number from 0 to 1000000';
  return z.number({ error: takes }).int(takes).min(0, takes).max(1_000_000, takes);
};
const quotaHours = () => {
  const takes = 'must be a number from 0 to 1000000000';
  return z.number({ error: takes }).min(0, takes).max(1e9, takes);
};

export const quotaUpdateSchema = z
  .strictObject({
    maxActiveJobs: quotaCount().optional(),
    maxConcurrentDevices: quotaCount().optional(),
    maxDevicesPerJob: quotaCount().optional(),
    deviceHoursPerMonth: quotaHours().optional(),
  })
  .openapi('QuotaUpdate');

export const apiKeyCreatedSchema = z
  .object({ id: z.uuid(), prefix: z.string(), apiKey: z.string().openapi({ description: 'Shown once' }) })
  .openapi('ApiKeyCreated');

export const nodeKeySchema = z
  .object({
    id: z.uuid(),
    name: z.string().nullable(),
    prefix: z.string(),
    createdAt: z.iso.datetime(),
    lastUsedAt: z.iso.datetime().nullable().openapi({ description: 'Last exchanged for a token' }),
    revokedAt: z.iso.datetime().nullable(),
  })
  .openapi('NodeKey');

export const nodeKeyListSchema = z
  .object({ data: z.array(nodeKeySchema), nextCursor: z.string().nullable() })
  .openapi('NodeKeyList');

export const tenantKeySchema = z
  .object({
    id: z.uuid(),
    name: z.string().nullable(),
    prefix: z.string().openapi({ description: 'The start of the key, to tell which one leaked' }),
    createdAt: z.iso.datetime(),
    lastUsedAt: z.iso.datetime().nullable().openapi({ description: 'Last exchanged for a token' }),
    revokedAt: z.iso.datetime().nullable(),
  })
  .openapi('TenantKey');

export const tenantKeyListSchema = z
  .object({ data: z.array(tenantKeySchema), nextCursor: z.string().nullable() })
  .openapi('TenantKeyList');

export const tenantSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    weight: z.number(),
    createdAt: z.iso.datetime(),
    quota: quotaSchema,
  })
  .openapi('Tenant');

export const tenantListSchema = z
  .object({ data: z.array(tenantSchema), nextCursor: z.string().nullable() })
  .openapi('TenantList');

export const tenantCreatedSchema = tenantSchema
  .extend({ apiKey: z.string(), apiKeyId: z.uuid(), apiKeyPrefix: z.string() })
  .openapi('TenantCreated');

export const tokenRequestSchema = z
  .strictObject({ apiKey: z.string().min(1).max(256) })
  .openapi('TokenRequest');
export const tokenSchema = z
  .object({
    token: z.string(),
    tokenType: z.literal('Bearer'),
    expiresAt: z.iso.datetime(),
    role: z.string(),
    tenant: z
      .object({ id: z.uuid(), name: z.string() })
      .nullable()
      .openapi({ description: "The key's tenant (null for a node key): who the token acts as" }),
  })
  .openapi('Token');

export const jobSchema = z
  .object({
    id: z.uuid(),
    object: z.literal('job'),
    name: z.string(),
    status: z.enum(jobStatuses),
    priority: z.string(),
    pool: z.string(),
    spec: jobSpecSchema,
    attempts: z.number().int().openapi({ description: 'Runs so far, every one counted' }),
    countedAttempts: z.number().int().openapi({
      description:
        'Runs that count toward `maxAttempts`: `attempts` less those the platform ended (a preemption, a drain, a node that lost the control plane)',
    }),
    maxAttempts: z
      .number()
      .int()
      .openapi({ description: 'Counted runs a job that keeps crashing gets before it fails' }),
    queuePosition: z
      .number()
      .int()
      .nullable()
      .openapi({
        description:
          "A queued job's place in its pool's order, from the last scheduling round; null otherwise, and " +
          'on a queued job no round has looked at yet',
      }),
    waitReason: z
      .enum(waitReasons)
      .nullable()
      .openapi({
        description:
          'Why a queued job is not running, from the last scheduling round; null when it is not queued, and ' +
          'on a queued job no round has judged yet (a fresh submission, or a job back from a lost or ' +
          'draining node): rounds run at once on a submission and at least every second. `unschedulable`: no ' +
          'ready node of its pool could hold it even empty (more devices than a node has, or more memory a ' +
          'device than a device has); it starts only once such a node registers',
      }),
    estimatedStartAt: z.iso
      .datetime()
      .nullable()
      .openapi({
        description:
          'When a queued job is predicted to start, from the last scheduling round; null when no round has ' +
          'looked at it yet or none can predict it (a pool without devices, a spent device-hour quota)',
      }),
    progress: z
      .object({
        step: z.number().int().nullable().openapi({
          description:
            'The newest step its runs reported; a run resumed from a checkpoint goes on from its step. Null before any run started',
        }),
        steps: z.number().int().openapi({ description: 'The steps its spec asks for (`workflow.steps`)' }),
        updatedAt: z.iso.datetime().nullable().openapi({ description: 'When `step` was reported' }),
        estimatedFinishAt: z.iso
          .datetime()
          .nullable()
          .openapi({
            description:
              'While running: when it reaches its last step at the pace of its current run so far (from its first ' +
              'reported step, its start left out); null until the run has 3 steps behind it. While queued: when the ' +
              "scheduler's last round predicts its run to end (its estimated start and its remaining steps at its " +
              "plan's pace). A target reward or accuracy can end it earlier",
          }),
      })
      .openapi({ description: 'How far the job got, and while it runs when it is expected to finish' }),
    deviceSeconds: z.number(),
    error: z.string().nullable(),
    finishReason: z
      .enum(finishReasons)
      .nullable()
      .openapi({
        description:
          'Why a succeeded job ended where it did: all its `workflow.steps` (`steps_completed`), or the target ' +
          'its spec set met first (`target_reward`, `target_accuracy`: e.g. at step 10 of 300); null while it has ' +
          'not succeeded, or when its node was too old to say',
      }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    startedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
    pausedAt: z.iso
      .datetime()
      .nullable()
      .openapi({
        description:
          'When its tenant paused it (`POST /v1/jobs/{id}/pause`); null when it is not paused. A paused job is ' +
          'placed by no round (a queued one waits with `waitReason` `paused`), and a running one checkpoints, ' +
          'leaves its devices and waits so, until it is resumed',
      }),
  })
  .openapi('Job');

export const jobListSchema = z
  .object({ data: z.array(jobSchema), nextCursor: z.string().nullable() })
  .openapi('JobList');

export const listJobsQuery = z
  .strictObject({
    limit: queryInt(1, 100).default(20),
    after: z.string().max(200).optional(),
    status: z.enum(jobStatuses).optional(),
    name: text().min(1).max(128).optional(),
  })
  .openapi('ListJobsQuery');

export const eventSchema = z
  .object({
    id: z.string().openapi({
      description: 'Increasing across all jobs (not only this one); a decimal string, as ids are 64-bit',
      example: '153',
    }),
    type: z.string(),
    data: z.record(z.string(), z.unknown()).openapi({
      description:
        "`status` and the fields of the event's type (docs/api.md, Jobs): `job.queued` and `job.running` carry " +
        '`attempt` (every run), `countedAttempts` (runs that count toward `maxAttempts`) and `maxAttempts`; ' +
        '`job.succeeded` carries `reason` (`steps_completed`, `target_reward`, `target_accuracy`, or null when unknown); ' +
        "`job.preempting` and `job.preempted` carry the notice's `reason`: `priority`, `reclaim`, `aging`, `shrink`, " +
        '`replan`, `compact`, `spread`, `pause` (its tenant paused it), `drain` (an admin cordoned its node with ' +
        "`evict`), or `admin` (POST /v1/jobs/{id}/preempt); `job.preempt_withdrawn` the withdrawn notice's `reason` " +
        "and `because` (`job_resumed`, `eviction_lifted`, `claimant_left`): the job runs on; the events a run's end " +
        "writes from its node's report carry `runEndedAt`, when it ended by the node's clock (a report delayed by an " +
        'API outage arrives later than that)',
    }),
    createdAt: z.iso.datetime(),
  })
  .openapi('JobEvent');

export const eventsQuery = z.strictObject({
  limit: queryInt(1, 1000).default(100),
  after: eventCursor().optional().openapi({
    description: 'Return events with a larger id: the `nextCursor` (or an event `id`) of a previous page',
  }),
});

/** The live stream's query: where it starts (`Last-Event-ID`, when sent, wins). */
export const eventStreamQuery = z.strictObject({
  after: eventCursor()
    .optional()
    .openapi({ description: 'Send the events with a larger id (`Last-Event-ID`, when sent, wins)' }),
});

export const eventStreamHeaders = z.object({
  'Last-Event-ID': eventCursor()
    .optional()
    .openapi({ description: 'The id of the last event the client has: the stream resumes after it' }),
});

export const eventListSchema = z
  .object({
    data: z.array(eventSchema),
    nextCursor: z.string().nullable().openapi({
      description: 'The last event id of a full page, to send as `after`; null on the last page',
    }),
  })
  .openapi('JobEventList');

export const metricsQuery = z.strictObject({
  name: text().min(1).max(128).optional(),
  from_step: int4Query().optional(),
  to_step: int4Query().optional(),
  limit: queryInt(1, 10_000).default(1000),
  after: z
    .string()
    .max(400)
    .optional()
    .openapi({ description: 'The `nextCursor` of the previous page: points after it in the same order' }),
});

export const metricPointSchema = z
  .object({
    step: z.number().int(),
    name: z.string(),
    value: wireNumber().openapi({
      description:
        'A number; one that is not finite (a diverged loss) as `"NaN"`, `"Infinity"` or `"-Infinity"`',
    }),
    createdAt: z.iso.datetime(),
  })
  .openapi('MetricPoint');

export const metricListSchema = z
  .object({
    data: z.array(metricPointSchema),
    nextCursor: z
      .string()
      .nullable()
      .openapi({ description: 'Where the next page starts (`after`); null on the last page' }),
  })
  .openapi('MetricPointList');

export const checkpointSchema = z
  .object({
    id: z.uuid(),
    jobId: z.uuid(),
    step: z.number().int(),
    sizeBytes: z.number().int(),
    sha256: z.string(),
    meta: z.record(z.string(), z.unknown()),
    createdAt: z.iso.datetime(),
  })
  .openapi('Checkpoint');

const deviceTimeSchema = z
  .object({
    running: z.number().openapi({ description: 'The engine computing on the devices' }),
    switching: z.number().openapi({ description: "Onload and offload: moving the job's state on and off" }),
    idle: z.number().openapi({
      description:
        'Held but neither computing nor switching (host-side work between engine calls: rewards, evaluation, checkpoint upload)',
    }),
  })
  .openapi('DeviceTime', {
    description: 'Device-seconds by state; the three add up to the total they split',
  });

export const usageSchema = z
  .object({
    tenantId: z.uuid(),
    periodStart: z.iso.datetime(),
    deviceSecondsUsed: z.number(),
    deviceSecondsByState: deviceTimeSchema.openapi({
      description: 'deviceSecondsUsed split by state (metered per second of every device hold)',
    }),
    jobs: z
      .array(
        z.object({
          jobId: z.uuid(),
          name: z.string(),
          status: z.string(),
          deviceSeconds: z
            .number()
            .openapi({ description: "The job's device-seconds since it was submitted" }),
          deviceSecondsByState: deviceTimeSchema,
        }),
      )
      .openapi({
        description:
          'Jobs that held devices this period (finished in it or not finished), most device-seconds first, at most 100',
      }),
    deviceHoursUsed: z.number(),
    activeJobs: z.number().int(),
    queuedJobs: z.number().int(),
    runningJobs: z.number().int(),
    quota: quotaSchema,
    remaining: z.object({ activeJobs: z.number().int(), deviceHours: z.number() }),
    shares: z
      .record(
        z.string(),
        z.object({
          share: z
            .number()
            .openapi({ description: 'Dominant fraction of the pool (devices, device memory) held now' }),
          entitlement: z
            .number()
            .openapi({ description: "What the tenant's weight entitles it to, among tenants with demand" }),
          devices: z
            .number()
            .openapi({ description: 'Devices held (a time-shared device counts 1/n per job)' }),
          demand: z.number().int().openapi({ description: 'Devices its queued jobs want' }),
        }),
      )
      .openapi({ description: 'Per pool, from the last scheduling round (fair share across tenants)' }),
  })
  .openapi('Usage');

export const poolSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    deviceType: z.string(),
    nodes: z.number().int(),
    devices: z.number().int(),
  })
  .openapi('Pool');

export const poolListSchema = z
  .object({ data: z.array(poolSchema), nextCursor: z.string().nullable() })
  .openapi('PoolList');

export const deviceSchema = z
  .object({
    index: z.number().int(),
    kind: z.string(),
    memoryBytes: z.number(),
    freeMemoryBytes: z.number(),
    threads: z.number().int(),
  })
  .openapi('Device');

export const nodeCordonSchema = z
  .object({
    cordonedAt: z.iso.datetime().openapi({ description: 'When an admin first cordoned it' }),
    reason: z.string().nullable().openapi({ description: "The admin's words, if any" }),
    evict: z.boolean().openapi({
      description:
        'Cordoned with eviction (a drain): each job running on it is given a preemption notice (reason `drain`), checkpoints and resumes elsewhere',
    }),
  })
  .openapi('NodeCordon');

export const nodeSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    pool: z.string(),
    status: z.enum(['ready', 'draining', 'lost']).openapi({
      description:
        "Set by the node's daemon: `ready`, `draining` (it is shutting down; nothing new is placed on it), `lost` (silent past the node timeout, or released). An admin's cordon is the separate `cordon` field",
    }),
    lastHeartbeatAt: z.iso.datetime(),
    cordon: nodeCordonSchema.nullable().openapi({
      description:
        'Set while an admin has the node cordoned (POST /v1/nodes/{id}/cordon): nothing new is placed on it, whatever its status; null otherwise',
    }),
    devices: z.array(deviceSchema),
  })
  .openapi('Node');

/** POST /v1/nodes/{id}/cordon: both fields optional, and so is the body. */
export const cordonNodeSchema = z
  .strictObject({
    reason: text()
      .min(1)
      .max(500)
      .optional()
      .openapi({ description: 'Why (shown with the node); a later cordon with none keeps it' }),
    evict: z.boolean().optional().openapi({
      description:
        "Also give every job running on the node a preemption notice (reason `drain`; its minimum run time does not apply): it checkpoints, returns to the queue and resumes from its checkpoint on another node. Kubernetes' drain. Once given, a later cordon does not take it back",
    }),
  })
  .openapi('CordonNode');

export const nodeListSchema = z
  .object({ data: z.array(nodeSchema), nextCursor: z.string().nullable() })
  .openapi('NodeList');
