// Public surface of the device lock.
export { DeviceLockService } from './device-lock-service.js';
export { LeaseKeeper, type LeaseKeeperOptions } from './lease-keeper.js';
export { FencingGuard } from './fencing-guard.js';
export { inspectDevice, listWaiters, readTimeline } from './lock-reads.js';
export { parseTimelineCursor } from './timeline.js';
export * from './errors.js';
export { lockKeys, deviceKey, wakeKey, type LockKeys } from './keys.js';
export type * from './types.js';
