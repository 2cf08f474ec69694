// Public shapes of the device-lock API. Times are milliseconds of Redis server time (`TIME`),
// never the client's clock: leases must mean the same thing to every process.

export interface DeviceLockOptions {
  /** Key prefix, e.g. `ts:`; on Redis Cluster include a hash tag (`{ts}:`). */
  prefix: string;
  /** Lease of a grant when the request names none. */
  defaultLeaseMs?: number;
  /** A waiter that misses heartbeats for this long is dropped; it heartbeats every third of it. */
  waiterTtlMs?: number;
  /** Approximate cap of the timeline stream (entries; one per device per grant and per end). */
  timelineMaxLen?: number;
  /** Idle blocking connections kept for waiters (one per concurrent waiting acquire). */
  maxIdleBlockingConnections?: number;
  /**
   * After Redis lost the lock's state, how long devices without a token go only to holders
   * taking back what they held (`reclaim`), counted from the first acquire that finds the state
   * lost. Default half of `defaultLeaseMs`: holders renew every third of their lease, and the
   * renew that finds a hold wiped takes it back (LeaseKeeper). 0: no grace.
   */
  wipeGraceMs?: number;
}

export interface AcquireRequest {
  /** All devices of the stage's group: granted together or not at all. Distinct, non-empty. */
  devices: readonly string[];
  job: string;
  stage: string;
  /** Who holds the lock (worker node / process id): shown in the timeline. */
  holder: string;
  /** Higher is served first. Default 0. */
  priority?: number;
  /** Data readiness, higher first among equal priority (a producer's output is ready). Default 0. */
  readiness?: number;
  leaseMs?: number;
  /** 0 = try once, never queue; undefined = wait until granted or aborted. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Caller-chosen id (unique among live waiters) so the scheduler can reorder or cancel it. */
  waiterId?: string;
  /** Called once the request is queued behind others (not called when granted at once). */
  onQueued?: (waiterId: string) => void;
  /**
   * This holder held these devices when Redis lost the lock's state and takes them back: granted
   * during the grace that holds devices without a token back from everyone else (LeaseKeeper).
   */
  reclaim?: boolean;
}

export interface Grant {
  waiterId: string;
  devices: readonly string[];
  /** Fencing token per device: strictly increasing per device over all grants. */
  tokens: Readonly<Record<string, number>>;
  job: string;
  stage: string;
  holder: string;
  leaseMs: number;
  /** Server time (ms) at which the lease lapses unless renewed. */
  leaseUntil: number;
  grantedAt: number;
}

export interface ReleaseResult {
  released: string[];
  /** Devices the grant no longer held (lease lapsed or revoked before this release). */
  lost: string[];
}

export interface DeviceHold {
  holder: string;
  job: string;
  stage: string;
  waiterId: string;
  token: number;
  leaseUntil: number;
  grantedAt: number;
}

export interface DeviceState {
  device: string;
  /** Last fencing token issued for the device (0 = never granted). */
  lastToken: number;
  hold: DeviceHold | null;
}

export interface WaiterInfo {
  waiterId: string;
  devices: string[];
  job: string;
  stage: string;
  holder: string;
  priority: number;
  readiness: number;
  seq: number;
  since: number;
  expiresAt: number;
}

export type EndReason = 'released' | 'lapsed' | 'revoked';

export interface TimelineInterval {
  device: string;
  job: string;
  stage: string;
  holder: string;
  waiterId: string;
  token: number;
  start: number;
  /** null while the device is still held. */
  end: number | null;
  reason: EndReason | null;
}

export interface TimelineQuery {
  devices?: readonly string[];
  /** Only devices whose id starts with this, e.g. `node-3/` for one node's devices. */
  devicePrefix?: string;
  /** Server time (ms): intervals that end at or after it, plus holds still open since before it. */
  since?: number;
  /** The cursor of a previous page (lock-reads.ts `readTimeline`). */
  after?: string;
  /** Holds a page lists at most (default 1000). */
  limit?: number;
}

export interface TimelinePage {
  intervals: TimelineInterval[];
  /** Pass as `after` to read on; null when the page reached the stream's end. */
  cursor: string | null;
  /**
   * When the oldest record the timeline still keeps was written (Redis server time, ms), null when
   * it keeps none: nothing before it is known. Redis keeps the timeline in memory only, so a
   * restart of Redis starts it anew (and trimming to `timelineMaxLen` moves it on).
   */
  recordedSince: number | null;
}

export interface SweepStats {
  lapsed: number;
  dropped: number;
  granted: number;
}
