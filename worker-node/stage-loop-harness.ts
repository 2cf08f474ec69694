/**
 * One job's StageLoop outside a daemon, for tests and benchmarks: real engines (offloaded, as a job
 * process starts them), the real Redis device lock, a placement as the scheduler would write it,
 * and checkpoints that are reported but not written anywhere. The engines get the placement's
 * devices as job-runner.ts gives them: the learner its training devices (all of them when
 * temporal), a generator its generation devices (spatial and hybrid).
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { JobSpec } from '../common/job-spec.js';
import {
  jobReportSchema,
  stageDeviceMap,
  type PlacementMode,
  type StageDevices,
} from '../common/node-protocol/index.js';
import { DeviceLockService } from '../common/device-lock/index.js';
import { createEngine, Engine, type CreateEngineOptions } from '../native/index.js';
import type { EngineFactory } from './rebalance-move.js';
import type { RunnerStart } from './messages.js';
import { StageLoop, type StageLoopDeps } from './stage-loop.js';

export interface HarnessOptions {
  spec: JobSpec;
  devices: number[];
  map: { mode: PlacementMode; stages: StageDevices };
  microBatches?: number;
  /** Partial rollouts as the planner would place them (temporal). */
  partialTail?: number;
  threadsPerDevice?: number;
  /** Bytes per device. */
  memoryBytes: number;
  model: CreateEngineOptions['model'];
  task: CreateEngineOptions['task'];
  redis: Redis;
  redisUrl: string;
  lockPrefix: string;
  leaseMs: number;
  report: StageLoopDeps['report'];
  /** The reactive balancer (spatial placements); default on with its defaults. */
  balancer?: StageLoopDeps['balancer'];
  /**
   * Wraps every engine the run makes, the balancer's restarts included (`devices`: its device
   * count): how a test stands in for devices whose speed adds up, which two shared cores cannot show.
   */
  wrap?: (engine: Engine, role: 'learner' | 'generator', devices: number) => Engine;
  /** What the loop tells the daemon it holds per device (job-runner.ts sends it on); default: ignored. */
  occupancy?: StageLoopDeps['occupancy'];
  /** Default: a record of the step, written nowhere. */
  saveCheckpoint?: StageLoopDeps['saveCheckpoint'];
}

/** A temporal job of the micro preset on device 0, the balancer off: what the stage-loop tests mostly run. */
export const microOnDevice0 = (): Pick<
  HarnessOptions,
  'devices' | 'map' | 'memoryBytes' | 'model' | 'task' | 'balancer'
> => ({
  devices: [0],
  map: stageDeviceMap('temporal', [0], { generate: 1, train: 1 }),
  memoryBytes: 256 * 2 ** 20,
  model: { preset: 'micro' },
  task: { name: 'addition', digits: 2 },
  balancer: 'off',
});

export interface Harness {
  loop: StageLoop;
  start: RunnerStart;
  engine: Engine;
  generator: Engine | undefined;
  locks: DeviceLockService;
  /** Closes the engines and the lock service's blocking connections (the Redis client stays open). */
  close(): Promise<void>;
}

export async function stageLoopHarness(o: HarnessOptions): Promise<Harness> {
  const nodeId = randomUUID();
  const threadsPerDevice = o.threadsPerDevice ?? 1;
  const start: RunnerStart = {
    t: 'start',
    jobId: randomUUID(),
    nodeId,
    spec: o.spec,
    placement: {
      nodeId,
      devices: o.devices,
      ...o.map,
      ...(o.microBatches ? { microBatches: o.microBatches } : {}),
      ...(o.partialTail ? { partialTail: o.partialTail } : {}),
      threadsPerDevice,
      memoryBytes: o.memoryBytes,
    },
    priority: 0,
    attempt: 1,
    resume: null,
    storage: { root: '/nonexistent' },
    redisUrl: o.redisUrl,
    lockPrefix: o.lockPrefix,
    leaseMs: o.leaseMs,
    runForMs: 60_000,
  };
  const on = (devices: number, seed: number) =>
    createEngine({
      device: { kind: 'cpu', threads: threadsPerDevice * devices, memoryBytes: o.memoryBytes * devices },
      model: o.model,
      task: o.task,
      seed,
    });
  const wrap = o.wrap ?? ((e: Engine) => e);
  const twoEngines = o.map.mode !== 'temporal';
  const learnerDevices = twoEngines ? o.map.stages.train.length : o.devices.length;
  const engine = wrap(on(learnerDevices, 1), 'learner', learnerDevices);
  const generator = twoEngines
    ? wrap(on(o.map.stages.generate.length, 2), 'generator', o.map.stages.generate.length)
    : undefined;
  for (const e of [engine, generator]) if (e) await e.offload();
  const engines: EngineFactory = {
    learnerFrom: async (dir, devices) => {
      const e = await Engine.fromCheckpoint(dir, {
        threads: threadsPerDevice * devices,
        memoryBytes: o.memoryBytes * devices,
      });
      await e.offload();
      return wrap(e, 'learner', devices);
    },
    generator: async (devices) => {
      const e = on(devices, 2);
      await e.offload();
      return wrap(e, 'generator', devices);
    },
  };
  const locks = new DeviceLockService(o.redis, { prefix: o.lockPrefix, defaultLeaseMs: o.leaseMs });
  // The test's own prefix: nothing held a device there before.
  await locks.declareFresh();
  // Every report is parsed as the API parses it once the daemon relays it (job-supervisor.ts), so
  // each test of the loop also checks that nothing it reports would be refused: a refused report
  // loses its metrics and profiles (a fractional byte count once cost a node its heartbeats).
  const refused: string[] = [];
  const report: StageLoopDeps['report'] = (r) => {
    const relayed = {
      queueSeq: 0,
      reportSeq: 1,
      metrics: r.metrics,
      profiles: r.profiles,
      events: r.events ?? [],
      deviceSeconds: r.deviceSeconds,
    };
    const parsed = jobReportSchema.safeParse(relayed);
    if (!parsed.success && refused.length < 5) refused.push(parsed.error.message);
    o.report(r);
  };
  const loop = new StageLoop({
    engine,
    generator,
    engines,
    ...(o.balancer !== undefined ? { balancer: o.balancer } : {}),
    locks,
    start,
    saveCheckpoint:
      o.saveCheckpoint ?? (async (step) => ({ step, sizeBytes: 0, sha256: '0'.repeat(64), meta: {} })),
    report,
    checkpointed: () => undefined,
    occupancy: o.occupancy ?? (() => undefined),
  });
  return {
    loop,
    start,
    engine,
    generator,
    locks,
    close: async () => {
      const now = loop.engines();
      await now.engine.close();
      await now.generator?.close();
      locks.close();
      if (refused.length) throw new Error(`the API would refuse reports of this loop: ${refused.join('; ')}`);
    },
  };
}
