// The native module's surface, declared once (Temporal's core-bridge pattern): no optional fields,
// every option already compiled by options.ts. Only engine.ts and the diagnostics wrappers call it.
import { createRequire } from 'node:module';

export interface NativeProfile {
  seconds: number;
  tokens: number;
  flops: number;
  peakArenaBytes: number;
}

export interface NativeCreateOptions {
  threads: number;
  memoryBytes: number;
  gemm: 'own' | 'blas';
  preset: string; // '' = use model
  model: { context: number; dModel: number; layers: number; heads: number; mlpMult: number };
  task: { name: string; digits: number; minLength: number; maxLength: number; alphabet: number };
  seed: number;
}

export interface NativeRollouts {
  batch: number;
  length: number;
  promptLength: number;
  groupSize: number;
  tokens: Int32Array;
  pad: Int32Array;
  logprobs: Float32Array;
  versions: Int32Array;
  mask: Uint8Array;
  rewards: Float32Array;
  lengths: Int32Array;
}

export interface NativeGenerateResult extends NativeRollouts {
  newTokens: number;
  inflightUpdates: number;
  minVersion: number;
  maxVersion: number;
  versionLag: number;
  /** Mean share of the batch's sequences still decoding per decoding step (1: no straggler tail). */
  occupancy: number;
  /** Groups held back unfinished for the next call (partial rollouts). */
  carriedGroups: number;
  texts: string[];
  profile: NativeProfile;
}

export interface NativeGenerateOptions {
  numPrompts: number;
  groupSize: number;
  split: 'train' | 'eval' | 'probe';
  temperature: number;
  topP: number;
  maxNewTokens: number;
  stopToken: number;
  decode: boolean;
  partialTail: number;
  maxCarries: number;
}

export interface NativeTrainOptions {
  algorithm: 'grpo' | 'ppo' | 'reinforce_is';
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  gradClip: number;
  clip: number;
  klCoef: number;
  isTruncation: number;
  temperature: number;
  epochs: number;
}

export interface NativeTrainStats {
  loss: number;
  rewardMean: number;
  rewardStd: number;
  kl: number;
  clipFraction: number;
  ratioMean: number;
  isWeightMean: number;
  entropy: number;
  gradNorm: number;
  tokens: number;
  weightVersion: number;
  seconds: number;
  /** accumulate: micro-batches pending after this one; applyGradients: how many the step combined; train: 1. */
  microBatches: number;
}

export interface NativeWarmupOptions {
  maxSteps: number;
  batchSize: number;
  targetAccuracy: number;
  probeEvery: number;
  lr: number;
  beta1: number;
  beta2: number;
  weightDecay: number;
  gradClip: number;
}

export interface NativeWarmupResult {
  steps: number;
  probeAccuracy: number;
  loss: number;
  tokenAccuracy: number;
  reached: boolean;
  /** Stopped between two steps by `interruptWarmup()`. */
  interrupted: boolean;
  profile: NativeProfile;
}

export interface NativeEvalResult {
  accuracy: number;
  problems: number;
  samples: { prompt: string; completion: string }[];
  profile: NativeProfile;
}

export interface NativeInfo {
  config: { vocab: number; context: number; dModel: number; layers: number; heads: number; mlpMult: number };
  parameters: number;
  stateBytes: number;
  onloaded: boolean;
  weightVersion: number;
  optimizerStep: number;
  pendingMicroBatches: number;
  lastFencingToken: bigint;
  publishedVersion: number;
  arenaBytes: number;
  budgetBytes: number;
  threads: number;
  kernel: string;
  vocabulary: string;
  endToken: number;
  padToken: number;
}

export interface NativeCheckpointState {
  withOptimizer: boolean;
  weightVersion: number;
  optimizerStep: number;
  rngState: string[];
}

export interface NativeEngine {
  info(): NativeInfo;
  warmup(o: NativeWarmupOptions): Promise<NativeWarmupResult>;
  /** Stops the warm-up running now, or the next to start, before its next step (synchronous; any time). */
  interruptWarmup(): void;
  generate(o: NativeGenerateOptions): Promise<NativeGenerateResult>;
  train(r: NativeRollouts, o: NativeTrainOptions): Promise<NativeTrainStats & { profile: NativeProfile }>;
  accumulate(
    r: NativeRollouts,
    o: NativeTrainOptions,
  ): Promise<NativeTrainStats & { profile: NativeProfile }>;
  applyGradients(): Promise<NativeTrainStats & { profile: NativeProfile }>;
  discardGradients(): Promise<{ discarded: number }>;
  rlStep(
    g: NativeGenerateOptions,
    t: NativeTrainOptions,
  ): Promise<{
    stats: NativeTrainStats;
    newTokens: number;
    inflightUpdates: number;
    occupancy: number;
    carriedGroups: number;
    /** Sequences trained on: fewer than generated when partial rollouts carried some groups. */
    trainedSequences: number;
    /** The trained rollouts' weight version per token position (−1: prompt or padding). */
    versions: Int32Array;
    /** The weight version they were trained from. */
    learnerVersion: number;
    profile: { generate: NativeProfile; train: NativeProfile; total: NativeProfile };
  }>;
  evaluate(o: { split: 'eval' | 'probe'; limit: number; samples: number }): Promise<NativeEvalResult>;
  resetOptimizer(): Promise<void>;
  offload(): Promise<NativeProfile & { bytes: number }>;
  onload(token: bigint | number): Promise<NativeProfile & { bytes: number }>;
  saveCheckpoint(
    dir: string,
    withOptimizer: boolean,
  ): Promise<{
    files: string[];
    weightVersion: number;
    optimizerStep: number;
    rngState: string[];
    profile: NativeProfile;
  }>;
  loadCheckpoint(dir: string, state: NativeCheckpointState): Promise<NativeProfile>;
  publishWeights(
    name: string,
  ): Promise<{ name: string; version: number; bytes: number; profile: NativeProfile }>;
  attachWeights(name: string): Promise<{ version: number; profile: NativeProfile }>;
  pullWeights(): Promise<{ version: number; profile: NativeProfile }>;
  close(): void;
}

export interface NativeModule {
  NativeEngine: new (o: NativeCreateOptions) => NativeEngine;
  benchGemm(o: {
    m: number;
    n: number;
    k: number;
    transA: boolean;
    transB: boolean;
    threads: number;
    seconds: number;
    kernel: 'own' | 'blas';
  }): Promise<number>;
  benchCopy(o: {
    bytes: number;
    threads: number;
    seconds: number;
  }): Promise<{ memcpyGBps: number; parallelCopyGBps: number }>;
  gemmCheck(o: {
    m: number;
    n: number;
    k: number;
    transA: boolean;
    transB: boolean;
    beta: number;
    threads: number;
    generic: boolean;
  }): Promise<number>;
  poolCheck(o: {
    threads: number;
    runs: number;
    delayUs: number;
  }): Promise<{ duplicated: number; missing: number }>;
  gradCheck(o: {
    objective: 'sft' | 'grpo';
    samples: number;
    step: number;
    seed: number;
  }): Promise<{ tensor: string; maxAbsError: number; maxAbsGrad: number; checked: number }[]>;
  build: { blas: boolean; kernel: string };
}

const require = createRequire(import.meta.url);
let loaded: NativeModule | undefined;

// Beside this file when run from source; from dist/native/, the addon stays in native/build.
const addonPaths = [
  './build/Release/timeshare_engine.node',
  '../../native/build/Release/timeshare_engine.node',
];

export function nativeModule(): NativeModule {
  if (loaded) return loaded;
  for (const p of addonPaths) {
    try {
      loaded = require(p) as NativeModule;
      return loaded;
    } catch (err) {
      if ((err as { code?: string }).code !== 'MODULE_NOT_FOUND') throw err;
    }
  }
  throw new Error('the native engine is not built: run `npm ci` (or `npm run build:native`)');
}
