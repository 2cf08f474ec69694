// The typed facade over one native engine. Calls on one instance are queued (each waits for the
// previous one), so callers may fire them concurrently; each runs off the event loop and resolves
// with its result and a profile. Native failures become EngineError with a stable code.
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { stalenessOf } from '../common/staleness.js';
import { EngineError, invalid } from './errors.js';
import {
  nativeModule,
  type NativeCreateOptions,
  type NativeEngine,
  type NativeGenerateResult,
  type NativeInfo,
  type NativeProfile,
  type NativeRollouts,
  type NativeTrainStats,
} from './engine-native.js';
import {
  bool,
  compileCreate,
  compileGenerate,
  compileTrain,
  compileWarmup,
  type CreateEngineOptions,
  type DeviceOptions,
  type GenerateOptions,
  type TrainOptions,
  type WarmupOptions,
} from './options.js';

export type Profile = NativeProfile;
export type Rollouts = NativeGenerateResult;
export type TrainStats = NativeTrainStats & { profile: Profile };
export type EngineInfo = NativeInfo;

export interface CheckpointSidecar {
  format: 'timeshare-checkpoint/1';
  tensorNaming: 'hf-gpt2';
  create: NativeCreateOptions;
  model: NativeInfo['config'];
  task: NativeCreateOptions['task'];
  weightVersion: number;
  optimizerStep: number;
  optimizer: boolean;
  rngState: string[];
  files: string[];
  savedAt: string;
}

const SIDECAR = 'checkpoint.json';

function checkRollouts(r: unknown): NativeRollouts {
  if (typeof r !== 'object' || r === null) throw invalid('rollouts must be the object generate() returned');
  const x = r as Partial<NativeRollouts>;
  const n = (x.batch ?? 0) * (x.length ?? 0);
  const ok =
    Number.isInteger(x.batch) &&
    Number.isInteger(x.length) &&
    x.tokens instanceof Int32Array &&
    x.tokens.length === n &&
    x.logprobs instanceof Float32Array &&
    x.mask instanceof Uint8Array &&
    x.rewards instanceof Float32Array;
  if (!ok) throw invalid('rollouts must be the object generate() returned (typed arrays of batch x length)');
  return x as NativeRollouts;
}

export class Engine {
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(
    private readonly native: NativeEngine,
    readonly options: NativeCreateOptions,
  ) {}

  /** Creates an engine (allocates its state in the device arena; throws BUDGET_EXCEEDED if it does not fit). */
  static create(options: CreateEngineOptions): Engine {
    const compiled = compileCreate(options);
    const mod = nativeModule();
    try {
      return new Engine(new mod.NativeEngine(compiled), compiled);
    } catch (e) {
      throw EngineError.from(e, new Error().stack);
    }
  }

  /** Recreates the engine a checkpoint was saved from and loads it (weights, optimizer, RNG). */
  static async fromCheckpoint(dir: string, device?: DeviceOptions): Promise<Engine> {
    const sidecar = await readSidecar(dir);
    const create = { ...sidecar.create };
    if (device?.threads !== undefined) create.threads = device.threads;
    if (device?.memoryBytes !== undefined) create.memoryBytes = device.memoryBytes;
    if (device?.gemm !== undefined) create.gemm = device.gemm;
    const mod = nativeModule();
    let native: NativeEngine;
    try {
      native = new mod.NativeEngine(create);
    } catch (e) {
      throw EngineError.from(e, new Error().stack);
    }
    const engine = new Engine(native, create);
    await engine.loadCheckpoint(dir);
    return engine;
  }

  private run<T>(fn: () => T | Promise<T>): Promise<T> {
    const stack = new Error().stack;
    const next = this.queue.then(async () => {
      if (this.closed) throw new EngineError('ENGINE_CLOSED', 'engine was closed');
      try {
        return await fn();
      } catch (e) {
        throw EngineError.from(e, stack);
      }
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Configuration and state counters (waits for queued calls). */
  info(): Promise<EngineInfo> {
    return this.run(() => this.native.info());
  }

  /** Bytes of persistent state (weights, grads, Adam moments, reference policy) in the arena. */
  async stateBytes(): Promise<number> {
    return (await this.info()).stateBytes;
  }

  /**
   * Teacher-forced supervised warm-up on answer tokens until the training probe reaches
   * targetAccuracy. `signal` stops it before its next step (`interrupted` in the result): a
   * cancelled job gives its devices back without waiting for the rest.
   */
  warmup(options: WarmupOptions = {}, signal?: AbortSignal) {
    const o = compileWarmup(options);
    return this.run(async () => {
      const stop = () => this.native.interruptWarmup();
      // Raised before the call when already aborted, so that its first step sees it.
      if (signal?.aborted) stop();
      else signal?.addEventListener('abort', stop, { once: true });
      try {
        return await this.native.warmup(o);
      } finally {
        signal?.removeEventListener('abort', stop);
      }
    });
  }

  /** Samples numPrompts x groupSize completions with a KV cache; rewards scored by the task. */
  generate(options: GenerateOptions = {}): Promise<Rollouts> {
    const o = compileGenerate(options);
    return this.run(() => this.native.generate(o));
  }

  /**
   * One optimizer step (per epoch) on rollouts from generate(). With `accumulate: true` no step is
   * taken: the micro-batch's gradient is added to those pending (same options, epochs 1) and the
   * returned stats are the micro-batch's; applyGradients() then steps once over all of them.
   */
  train(options: TrainOptions & { rollouts: NativeRollouts; accumulate?: boolean }): Promise<TrainStats> {
    const r = checkRollouts(options?.rollouts);
    const accumulate = bool('accumulate', options.accumulate, false);
    const o = compileTrain(options);
    return this.run(() => (accumulate ? this.native.accumulate(r, o) : this.native.train(r, o)));
  }

  /**
   * One optimizer step over every micro-batch accumulated since the last step (weight version + 1);
   * stats aggregate them all (token-weighted loss, KL, ...; rewards over all sequences).
   * INVALID_ARGUMENT if nothing is pending.
   */
  applyGradients(): Promise<TrainStats> {
    return this.run(() => this.native.applyGradients());
  }

  /** Drops pending accumulated gradients (a step abandoned at a stop request); returns how many. */
  discardGradients(): Promise<{ discarded: number }> {
    return this.run(() => this.native.discardGradients());
  }

  /**
   * generate + train in one native call (no rollout round-trip through JS), with the weight lag of
   * the tokens it trained on (carried ones of partial rollouts are the off-policy ones).
   */
  async rlStep(options: { generate?: GenerateOptions; train?: TrainOptions } = {}) {
    const g = compileGenerate(options.generate);
    const t = compileTrain(options.train);
    const r = await this.run(() => this.native.rlStep(g, t));
    return { ...r, staleness: stalenessOf(r.learnerVersion, r.versions) };
  }

  /** Greedy exact-match accuracy on the fixed held-out set (or the training probe). */
  evaluate(options: { split?: 'eval' | 'probe'; limit?: number; samples?: number } = {}) {
    const split = options.split ?? 'eval';
    if (split !== 'eval' && split !== 'probe') throw invalid('split must be eval or probe');
    const limit = options.limit ?? 0;
    const samples = options.samples ?? 0;
    if (!Number.isInteger(limit) || limit < 0) throw invalid('limit must be a non-negative integer');
    if (!Number.isInteger(samples) || samples < 0 || samples > 1000)
      throw invalid('samples must be in [0, 1000]');
    return this.run(() => this.native.evaluate({ split, limit, samples }));
  }

  /** Zeroes the Adam moments and step (e.g. between warm-up and RL). */
  resetOptimizer(): Promise<void> {
    return this.run(() => this.native.resetOptimizer());
  }

  /** Copies weights and optimizer state to host memory and frees the arena. */
  offload() {
    return this.run(() => this.native.offload());
  }

  /** Restores state into the arena under the device-lock fencing token (STALE_FENCING_TOKEN if older). */
  onload(fencingToken: number | bigint) {
    if (typeof fencingToken === 'number' && !(Number.isSafeInteger(fencingToken) && fencingToken >= 0))
      throw invalid('fencingToken must be a non-negative safe integer or a bigint');
    if (typeof fencingToken === 'bigint' && (fencingToken < 0n || fencingToken >= 2n ** 64n))
      throw invalid('fencingToken must fit in 64 bits');
    if (typeof fencingToken !== 'number' && typeof fencingToken !== 'bigint')
      throw invalid('fencingToken must be a number or a bigint');
    return this.run(() => this.native.onload(fencingToken));
  }

  /** Writes model.safetensors, optimizer.safetensors (optional) and checkpoint.json into dir. */
  saveCheckpoint(dir: string, options: { withOptimizer?: boolean } = {}) {
    if (typeof dir !== 'string' || dir.length === 0) throw invalid('dir must be a non-empty string');
    const withOptimizer = options.withOptimizer ?? true;
    return this.run(async () => {
      const r = await this.native.saveCheckpoint(dir, withOptimizer);
      const info = this.native.info();
      const sidecar: CheckpointSidecar = {
        format: 'timeshare-checkpoint/1',
        tensorNaming: 'hf-gpt2',
        create: this.options,
        model: info.config,
        task: this.options.task,
        weightVersion: r.weightVersion,
        optimizerStep: r.optimizerStep,
        optimizer: withOptimizer,
        rngState: r.rngState,
        files: r.files.map((f) => path.basename(f)),
        savedAt: new Date().toISOString(),
      };
      await writeFile(path.join(dir, SIDECAR), JSON.stringify(sidecar, null, 2) + '\n');
      return { ...r, sidecar: path.join(dir, SIDECAR) };
    });
  }

  /** Loads a checkpoint saved from an engine with the same model and task. */
  loadCheckpoint(dir: string) {
    if (typeof dir !== 'string' || dir.length === 0) throw invalid('dir must be a non-empty string');
    return this.run(async () => {
      const s = await readSidecar(dir);
      const mine = this.native.info().config;
      const same = (Object.keys(mine) as (keyof typeof mine)[]).every((k) => mine[k] === s.model[k]);
      if (!same)
        throw invalid(`checkpoint model ${JSON.stringify(s.model)} differs from ${JSON.stringify(mine)}`);
      return this.native.loadCheckpoint(dir, {
        withOptimizer: s.optimizer,
        weightVersion: s.weightVersion,
        optimizerStep: s.optimizerStep,
        rngState: s.rngState,
      });
    });
  }

  /** Publishes the current weights (and version) to a shared-memory segment other engines can attach. */
  publishWeights(name?: string) {
    const n = name ?? `/timeshare-${process.pid}-${randomBytes(6).toString('hex')}`;
    if (!/^\/[A-Za-z0-9._-]{1,200}$/.test(n))
      throw invalid('shared-memory name must match /^\\/[A-Za-z0-9._-]+$/');
    return this.run(() => this.native.publishWeights(n));
  }

  /** Maps a publisher's segment; generate() then applies newer versions between decoding steps. */
  attachWeights(name: string) {
    if (typeof name !== 'string' || !/^\/[A-Za-z0-9._-]{1,200}$/.test(name))
      throw invalid('shared-memory name must match /^\\/[A-Za-z0-9._-]+$/');
    return this.run(() => this.native.attachWeights(name));
  }

  /** Applies the newest published version now (outside generation). */
  pullWeights() {
    return this.run(() => this.native.pullWeights());
  }

  /** Frees everything after queued calls finish; later calls fail with ENGINE_CLOSED. */
  close(): Promise<void> {
    return this.run(() => {
      this.native.close();
      this.closed = true;
    });
  }
}

async function readSidecar(dir: string): Promise<CheckpointSidecar> {
  let text: string;
  try {
    text = await readFile(path.join(dir, SIDECAR), 'utf8');
  } catch (e) {
    throw new EngineError(
      'CORRUPT_CHECKPOINT',
      `cannot read ${path.join(dir, SIDECAR)}: ${(e as Error).message}`,
    );
  }
  let s: CheckpointSidecar;
  try {
    s = JSON.parse(text) as CheckpointSidecar;
  } catch {
    throw new EngineError('CORRUPT_CHECKPOINT', `${SIDECAR} is not valid JSON`);
  }
  const ok =
    s?.format === 'timeshare-checkpoint/1' &&
    typeof s.weightVersion === 'number' &&
    typeof s.optimizerStep === 'number' &&
    typeof s.optimizer === 'boolean' &&
    Array.isArray(s.rngState) &&
    s.rngState.length === 4 &&
    typeof s.create === 'object' &&
    typeof s.model === 'object';
  if (!ok) throw new EngineError('CORRUPT_CHECKPOINT', `${SIDECAR} lacks required fields`);
  return s;
}

/** Convenience: `createEngine(options)` = `Engine.create(options)`. */
export function createEngine(options: CreateEngineOptions): Engine {
  return Engine.create(options);
}
