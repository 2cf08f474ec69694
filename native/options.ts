// What callers pass -> defaults filled -> checked and compiled into the native shapes (the Temporal
// worker-options pattern). Every failure is an EngineError INVALID_ARGUMENT naming the field.
import { invalid } from './errors.js';
import {
  algorithms,
  defaultSeed,
  modelPresets,
  taskDefaults,
  taskNames,
} from '../common/engine-vocabulary.js';
import type {
  NativeCreateOptions,
  NativeGenerateOptions,
  NativeTrainOptions,
  NativeWarmupOptions,
} from './engine-native.js';

export type ModelPreset = 'micro' | 'tiny' | 'small';
export type TaskName = 'addition' | 'reversal' | 'sorting';
export type Algorithm = 'grpo' | 'ppo' | 'reinforce_is';

export interface ModelSizes {
  dModel: number;
  layers: number;
  heads: number;
  context?: number;
  mlpMult?: number;
}

export interface TaskOptions {
  name: TaskName;
  /** addition: operand digits (default 2). */
  digits?: number;
  /** reversal/sorting: string length range (default 3..6). */
  minLength?: number;
  maxLength?: number;
  /** reversal: letters a.. (default 10). */
  alphabet?: number;
}

export interface DeviceOptions {
  kind?: 'cpu';
  threads?: number;
  /** Arena budget in bytes (default 1 GiB). */
  memoryBytes?: number;
  /** 'blas' uses OpenBLAS when the build found it; default 'own' (our sgemm, same results everywhere). */
  gemm?: 'own' | 'blas';
}

export interface CreateEngineOptions {
  device?: DeviceOptions;
  model?: { preset: ModelPreset } | ModelSizes;
  task: TaskOptions;
  seed?: number;
}

export interface GenerateOptions {
  numPrompts?: number;
  groupSize?: number;
  /** train: fresh problems from the training distribution; eval/probe: the fixed 500-problem sets. */
  split?: 'train' | 'eval' | 'probe';
  /** 0 = greedy. */
  temperature?: number;
  topP?: number;
  /** 0 = the task's default (answer length + 1). */
  maxNewTokens?: number;
  /** -1 = the task's <end>. */
  stopToken?: number;
  /** Also return the decoded text of every sequence. */
  decode?: boolean;
  /**
   * Partial rollouts (train split): stop decoding once at most this share of the prompt groups is
   * unfinished, train on the finished groups and carry the others into the next call, which replays
   * their tokens and samples on (default 0: off).
   */
  partialTail?: number;
  /** A group carried this many times finishes in the next call (bounds its weight lag; default 1). */
  maxCarries?: number;
}

export interface OptimizerOptions {
  lr?: number;
  betas?: [number, number];
  eps?: number;
  weightDecay?: number;
  gradClip?: number;
}

export interface TrainOptions extends OptimizerOptions {
  algorithm?: Algorithm;
  /** PPO/GRPO ratio clip (default 0.2). */
  clip?: number;
  /** k3 KL penalty to a frozen reference (snapshot at the first step with klCoef > 0). */
  klCoef?: number;
  /** reinforce_is: importance weights truncated at c (default 5, PipelineRL). */
  isTruncation?: number;
  temperature?: number;
  epochs?: number;
}

export interface WarmupOptions extends OptimizerOptions {
  maxSteps?: number;
  batchSize?: number;
  /** Stop when greedy accuracy on the 500-problem training probe reaches this (default 0.3). */
  targetAccuracy?: number;
  probeEvery?: number;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function num(name: string, v: unknown, def: number, lo: number, hi: number): number {
  if (v === undefined) return def;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < lo || v > hi)
    throw invalid(`${name} must be a finite number in [${lo}, ${hi}] (got ${String(v)})`);
  return v;
}

export function int(name: string, v: unknown, def: number, lo: number, hi: number): number {
  const x = num(name, v, def, lo, hi);
  if (!Number.isInteger(x)) throw invalid(`${name} must be an integer (got ${x})`);
  return x;
}

function oneOf<T extends string>(name: string, v: unknown, def: T, allowed: readonly T[]): T {
  if (v === undefined) return def;
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v))
    throw invalid(`${name} must be one of ${allowed.join(', ')} (got ${String(v)})`);
  return v as T;
}

export function bool(name: string, v: unknown, def: boolean): boolean {
  if (v === undefined) return def;
  if (typeof v !== 'boolean') throw invalid(`${name} must be a boolean`);
  return v;
}

function obj(name: string, v: unknown, optional = true): Record<string, unknown> {
  if (v === undefined && optional) return {};
  if (!isObject(v)) throw invalid(`${name} must be an object`);
  return v;
}

function betas(name: string, v: unknown): [number, number] {
  if (v === undefined) return [0.9, 0.99];
  if (!Array.isArray(v) || v.length !== 2) throw invalid(`${name} must be [beta1, beta2]`);
  return [num(`${name}[0]`, v[0], 0.9, 0, 0.999999), num(`${name}[1]`, v[1], 0.99, 0, 0.999999)];
}

export function compileCreate(o: unknown): NativeCreateOptions {
  const top = obj('options', o, false);
  const device = obj('device', top.device);
  oneOf('device.kind', device.kind, 'cpu', ['cpu'] as const);
  const model = obj('model', top.model);
  const task = obj('task', top.task, false);
  const name = oneOf('task.name', task.name, 'addition', taskNames);
  const minLength = int('task.minLength', task.minLength, taskDefaults.minLength, 1, 64);
  const maxLength = int('task.maxLength', task.maxLength, taskDefaults.maxLength, 1, 64);
  if (maxLength < minLength) throw invalid('task.maxLength must be >= task.minLength');
  const usesPreset = model.preset !== undefined || model.dModel === undefined;
  const dModel = usesPreset ? 128 : int('model.dModel', model.dModel, 128, 4, 4096);
  const heads = usesPreset ? 4 : int('model.heads', model.heads, 4, 1, 256);
  if (dModel % heads !== 0) throw invalid('model.heads must divide model.dModel');
  return {
    threads: int('device.threads', device.threads, 2, 1, 256),
    memoryBytes: int('device.memoryBytes', device.memoryBytes, 2 ** 30, 1024, 2 ** 50),
    gemm: oneOf('device.gemm', device.gemm, 'own', ['own', 'blas'] as const),
    preset: usesPreset ? oneOf('model.preset', model.preset, 'tiny', modelPresets) : '',
    model: {
      context: int('model.context', model.context, 32, 2, 4096),
      dModel,
      layers: usesPreset ? 2 : int('model.layers', model.layers, 2, 1, 64),
      heads,
      mlpMult: int('model.mlpMult', model.mlpMult, 4, 1, 16),
    },
    task: {
      name,
      digits: int('task.digits', task.digits, taskDefaults.digits, 1, 9),
      minLength,
      maxLength,
      alphabet: int('task.alphabet', task.alphabet, 10, 2, 26),
    },
    seed: int('seed', top.seed, defaultSeed, 0, Number.MAX_SAFE_INTEGER),
  };
}

export function compileGenerate(o: unknown): NativeGenerateOptions {
  const g = obj('options', o);
  const numPrompts = int('numPrompts', g.numPrompts, 64, 1, 65536);
  const groupSize = int('groupSize', g.groupSize, 8, 1, 65536);
  if (numPrompts * groupSize > 65536) throw invalid('numPrompts * groupSize must be <= 65536');
  return {
    numPrompts,
    groupSize,
    split: oneOf('split', g.split, 'train', ['train', 'eval', 'probe'] as const),
    temperature: num('temperature', g.temperature, 1, 0, 100),
    topP: num('topP', g.topP, 1, 1e-6, 1),
    maxNewTokens: int('maxNewTokens', g.maxNewTokens, 0, 0, 4096),
    stopToken: int('stopToken', g.stopToken, -1, -1, 65535),
    decode: bool('decode', g.decode, false),
    partialTail: num('partialTail', g.partialTail, 0, 0, 0.99),
    maxCarries: int('maxCarries', g.maxCarries, 1, 0, 64),
  };
}

export function compileTrain(o: unknown): NativeTrainOptions {
  const t = obj('options', o);
  const [beta1, beta2] = betas('betas', t.betas);
  return {
    algorithm: oneOf('algorithm', t.algorithm, 'grpo', algorithms),
    lr: num('lr', t.lr, 3e-4, 0, 10),
    beta1,
    beta2,
    eps: num('eps', t.eps, 1e-8, 1e-12, 1),
    weightDecay: num('weightDecay', t.weightDecay, 0, 0, 10),
    gradClip: num('gradClip', t.gradClip, 1, 0, 1e6),
    clip: num('clip', t.clip, 0.2, 0, 10),
    klCoef: num('klCoef', t.klCoef, 0, 0, 100),
    isTruncation: num('isTruncation', t.isTruncation, 5, 1, 1e6),
    temperature: num('temperature', t.temperature, 1, 1e-3, 100),
    epochs: int('epochs', t.epochs, 1, 1, 16),
  };
}

export function compileWarmup(o: unknown): NativeWarmupOptions {
  const w = obj('options', o);
  const [beta1, beta2] = betas('betas', w.betas);
  return {
    maxSteps: int('maxSteps', w.maxSteps, 2000, 0, 10_000_000),
    batchSize: int('batchSize', w.batchSize, 64, 1, 65536),
    targetAccuracy: num('targetAccuracy', w.targetAccuracy, 0.3, 0, 1),
    probeEvery: int('probeEvery', w.probeEvery, 25, 1, 1_000_000),
    lr: num('lr', w.lr, 1e-3, 0, 10),
    beta1,
    beta2,
    weightDecay: num('weightDecay', w.weightDecay, 0, 0, 10),
    gradClip: num('gradClip', w.gradClip, 1, 0, 1e6),
  };
}
