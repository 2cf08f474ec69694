// The only module other folders import from native/.
export { Engine, createEngine } from './engine.js';
export type { CheckpointSidecar, EngineInfo, Profile, Rollouts, TrainStats } from './engine.js';
export { EngineError, ENGINE_ERROR_CODES } from './errors.js';
export type { EngineErrorCode } from './errors.js';
export type {
  Algorithm,
  CreateEngineOptions,
  DeviceOptions,
  GenerateOptions,
  ModelPreset,
  ModelSizes,
  TaskName,
  TaskOptions,
  TrainOptions,
  WarmupOptions,
} from './options.js';
export { buildInfo, benchCopy, benchGemm } from './diagnostics.js';
