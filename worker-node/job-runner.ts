/**
 * A job process: forked by the daemon for one job, driven over IPC (messages.ts). It owns the
 * engine and its own Redis connection for the device lock, so if it dies its leases lapse and
 * nothing else is affected. If the daemon dies, the IPC channel closes and this process exits at
 * once: a job never runs unsupervised.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { openCheckpointStore } from '../common/storage/index.js';
import {
  createEngine,
  Engine,
  EngineError,
  type CreateEngineOptions,
  type ModelPreset,
  type TaskName,
} from '../native/index.js';
import { DeviceLockService } from '../common/device-lock/index.js';
import type { JobSpec } from '../common/job-spec.js';
import { writeCheckpoint } from './checkpoint-writer.js';
import { defaultSeed, presetSizes } from '../common/engine-vocabulary.js';
import type { ControlAction, DaemonToRunner, RunnerStart, RunnerToDaemon } from './messages.js';
import { StageLoop } from './stage-loop.js';
import { deviceShare, jobEngineFactory } from './rebalance-move.js';
import { lengthenCompletions } from './long-completions.js';
import { emulateDevices } from './emulated-devices.js';
import { toWireNumber } from '../common/node-protocol/fields.js';
import { LAPSED_EXIT_CODE, watchDaemon } from './supervision.js';
import { LOCK_OUTAGE_EXIT_CODE, LockOutageError } from './lock-outage.js';

function send(msg: RunnerToDaemon): Promise<void> {
  return new Promise((resolve, reject) =>
    process.send!(msg, undefined, {}, (err) => (err ? reject(err) : resolve())),
  );
}

export function engineOptions(spec: JobSpec, placement: RunnerStart['placement']): CreateEngineOptions {
  const m = spec.workflow.model;
  // A spec that sets any size gets the others from its preset: the engine takes a preset or all
  // sizes, and a lone contextLength or dModel used to be dropped (the job ran the bare preset).
  const sized =
    m.dModel !== undefined ||
    m.layers !== undefined ||
    m.heads !== undefined ||
    m.contextLength !== undefined;
  const preset = presetSizes[m.preset];
  return {
    device: {
      kind: 'cpu',
      threads: placement.threadsPerDevice * placement.devices.length,
      memoryBytes: placement.memoryBytes * placement.devices.length,
    },
    model: sized
      ? {
          dModel: m.dModel ?? preset.dModel,
          layers: m.layers ?? preset.layers,
          heads: m.heads ?? preset.heads,
          ...(m.contextLength ? { context: m.contextLength } : {}),
        }
      : { preset: m.preset },
    task: {
      name: spec.workflow.task.name,
      ...(spec.workflow.task.digits !== undefined ? { digits: spec.workflow.task.digits } : {}),
      ...(spec.workflow.task.minLength !== undefined ? { minLength: spec.workflow.task.minLength } : {}),
      ...(spec.workflow.task.maxLength !== undefined ? { maxLength: spec.workflow.task.maxLength } : {}),
    },
    seed: spec.workflow.task.seed ?? defaultSeed,
  };
}

/**
 * The options of an engine that runs the model and task `learner` runs, seeded from its seed. A
 * learner resumed from a checkpoint is the checkpoint's model, task and random state, which a job
 * admitted before the API stored a checkpoint job's spec as it runs (api/jobs/submit.ts) need not
 * share with its spec: a generator built from the spec could not attach the learner's weights (the
 * job crashed on every attempt), and it sampled from the spec's seed, not the learner's.
 */
export function sameModelAs(learner: Engine, opts: CreateEngineOptions): CreateEngineOptions {
  const { preset, model, task, seed } = learner.options;
  return {
    ...opts,
    model: preset ? { preset: preset as ModelPreset } : model,
    task: { ...task, name: task.name as TaskName },
    seed,
  };
}

/** The engine from a checkpoint; a remote one is fetched into a scratch folder that never outlives this. */
async function resumedEngine(
  store: ReturnType<typeof openCheckpointStore>,
  dirKey: string,
  device: CreateEngineOptions['device'],
): Promise<Engine> {
  const scratch =
    store.kind === 'local' ? null : await fs.mkdtemp(path.join(os.tmpdir(), 'timeshare-resume-'));
  try {
    return await Engine.fromCheckpoint(await store.fetchDir(dirKey, scratch ?? ''), device);
  } finally {
    if (scratch) await fs.rm(scratch, { recursive: true, force: true });
  }
}

/** A job that fails the same way on every attempt, before it runs: it fails now, with this reason. */
class CannotRun extends Error {}

async function run(start: RunnerStart, loopRef: { loop: StageLoop | null }): Promise<void> {
  const initial = start.spec.initialCheckpoint;
  // The control plane names the initial checkpoint as where a job with none of its own resumes; when
  // it names nothing, the checkpoint was deleted after the submission named it (by hand, or by
  // retention before admission locked the row it names: jobs admitted before migration
  // 20261128120000). Starting from a fresh model instead would train something the tenant did not
  // ask for.
  if (!start.resume && initial)
    throw new CannotRun(
      `its initialCheckpoint ${initial.checkpointId} (of job ${initial.jobId}) no longer exists: it was deleted before this job first ran`,
    );
  let opts = engineOptions(start.spec, start.placement);
  // Spatial and hybrid: the learner and a generator each get their stage's devices from the placement.
  const spatial = start.placement.mode !== 'temporal';
  const { stages } = start.placement;
  const learnerDevice = spatial ? deviceShare(start.placement, stages.train.length) : opts.device;
  const store = openCheckpointStore(start.storage);
  // What a run of this job killed mid-save left: this run is the job's only one now.
  await store.discardScratch(start.jobId);
  const engine = start.resume
    ? await resumedEngine(store, start.resume.dirKey, learnerDevice)
    : createEngine({ ...opts, device: learnerDevice });
  // Every engine made from here on (the generator, the balancer's restarts) runs the learner's model.
  opts = sameModelAs(engine, opts);
  const generator = spatial
    ? createEngine({
        ...opts,
        device: deviceShare(start.placement, stages.generate.length),
        seed: (opts.seed ?? 1) + 1,
      })
    : undefined;
  // (Test-only; a generator the reactive balancer restarts is not wrapped again.)
  if (generator) lengthenCompletions(generator, start, 'generate');
  else lengthenCompletions(engine, start, 'rlStep');
  // (Test-only: devices whose speed adds up, on a machine that cannot show it; restarts too.)
  const emulate = (e: Engine, role: 'learner' | 'generator', devices: number) =>
    emulateDevices(e, role, devices, start.spec.name);
  if (generator) {
    emulate(generator, 'generator', stages.generate.length);
    emulate(engine, 'learner', stages.train.length);
  }
  // Fresh engines start with their state on the device; it must wait in host memory for the lock.
  for (const e of [engine, generator]) if (e && (await e.info()).onloaded) await e.offload();
  // A call fails after 3 reconnect attempts rather than wait for Redis: the LeaseKeeper must see a
  // renew fail to know when its lease has lapsed. The stage loop asks again while the lock allows
  // and stops the job as an outage after that (lock-outage.ts), never as a crash.
  const redis = new Redis(start.redisUrl, { maxRetriesPerRequest: 3 });
  // Each failed call surfaces where it was made; ioredis would print every reconnect error here.
  redis.on('error', () => undefined);
  const locks = new DeviceLockService(redis, { prefix: start.lockPrefix, defaultLeaseMs: start.leaseMs });
  const pending: Promise<void>[] = [];
  // The reactive balancer restarts the two sides on other device counts (rebalance-move.ts).
  const engines = jobEngineFactory(opts, start.placement, emulate);
  const loop = new StageLoop({
    engine,
    generator,
    engines,
    balancer:
      start.balancer?.enabled === false
        ? 'off'
        : start.balancer?.threshold !== undefined
          ? { threshold: start.balancer.threshold }
          : {},
    locks,
    start,
    saveCheckpoint: (step, learner) =>
      writeCheckpoint(learner, store, start.jobId, step, {
        attempt: start.attempt,
        task: start.spec.workflow.task,
      }),
    report: (r) =>
      void pending.push(
        send({ t: 'report', ...r, metrics: r.metrics.map((m) => ({ ...m, value: toWireNumber(m.value) })) }),
      ),
    checkpointed: (c) => void pending.push(send({ t: 'checkpoint', ...c })),
    occupancy: (devices, bytes) =>
      void send({ t: 'occupancy', devices: devices.map((d) => Number(d.split('/').at(-1))), bytes }).catch(
        () => undefined,
      ),
  });
  loopRef.loop = loop;
  // Requests that arrived while the engine was being built.
  for (const r of early) loop.requestStop(r);
  await send({ t: 'started', resumedFromStep: start.resume?.fromOwnRun ? start.resume.step : null });
  try {
    const result = await loop.run();
    await Promise.all(pending);
    if (result.outcome === 'cancelled') await send({ t: 'cancelled' });
    else
      await send({
        t: 'finished',
        outcome: result.outcome,
        error: result.error,
        reason: result.reason ?? null,
      });
  } finally {
    const now = loop.engines();
    await now.engine.close().catch(() => undefined);
    await now.generator?.close().catch(() => undefined);
    locks.close();
    redis.disconnect();
  }
}

const loopRef: { loop: StageLoop | null } = { loop: null };
const early: ControlAction[] = [];
let daemon: { until(forMs: number): void } | null = null;
process.on('disconnect', () => process.exit(1));
process.on('message', (msg: DaemonToRunner) => {
  if (msg.t === 'alive') return daemon?.until(msg.forMs);
  if (msg.t === 'start') {
    // A spare waits for its start without a watch: it holds nothing and runs nothing.
    daemon = watchDaemon(msg.runForMs, (sinceWordMs) => {
      process.stderr.write(
        `job ${msg.jobId}: no heartbeat of the node's accepted in time (the daemon's last word ${Math.round(sinceWordMs)} ms ago), stopping\n`,
      );
      process.exit(LAPSED_EXIT_CODE);
    });
    run(msg, loopRef).then(
      () => process.exit(0),
      async (err) => {
        // The device lock out of reach for longer than it allows: the platform's loss, not the
        // job's. The daemon reports it `lost_contact` (no attempt used; resumed from a checkpoint).
        if (err instanceof LockOutageError) {
          process.stderr.write(`job ${msg.jobId} stopped: ${err.message}\n`);
          process.exit(LOCK_OUTAGE_EXIT_CODE);
        }
        process.stderr.write(
          `job ${msg.jobId} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
        );
        // The engine refusing the job's spec (a context too short for its task, say) fails the same
        // way on every attempt, as a missing initial checkpoint does: the job fails now, with the
        // reason. Anything else is a crash, retried from the last checkpoint.
        const reason =
          err instanceof CannotRun
            ? err.message
            : err instanceof EngineError && err.code === 'INVALID_ARGUMENT'
              ? `the engine cannot run this job: ${err.message}`
              : null;
        if (reason)
          await send({ t: 'finished', outcome: 'failed', error: reason })
            .then(() => process.exit(0))
            .catch(() => undefined);
        process.exit(2);
      },
    );
    return;
  }
  if (msg.t === 'withdraw') {
    if (loopRef.loop) loopRef.loop.withdrawPreempt();
    else if (early.includes('preempt')) early.splice(early.indexOf('preempt'), 1);
    return;
  }
  if (loopRef.loop) loopRef.loop.requestStop(msg.t);
  else early.push(msg.t);
});
// SIGTERM is the daemon's business (it drains through IPC); a job process ignores the signal so a
// process-group signal cannot cut a checkpoint in half.
process.on('SIGTERM', () => undefined);
