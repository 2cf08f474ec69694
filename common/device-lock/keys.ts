// Redis key layout of the device lock. Every process that reads lock state (scheduler, worker
// daemon, API timeline) must agree on it, so it lives in one place (to move to common/).
//
// All keys share `<prefix>lock:`. The scripts touch device and waiter keys they compute
// themselves, so on Redis Cluster the prefix must carry a hash tag (e.g. `{ts}:`) that puts
// every lock key in one slot.

export interface LockKeys {
  /** Base passed to the scripts as ARGV[1]; device/waiter/wake keys are derived from it. */
  base: string;
  /** HASH waiter id → JSON {devs, job, stage, holder, prio, ready, lease, ttl, since, seq, exp};
   *  exp = expiry (ms, server time), pushed forward by the waiter's heartbeats. */
  waiterData: string;
  /** ZSET device id → leaseUntil (ms, Redis server time): the sweeper's index of held devices. */
  leases: string;
  /** Counter giving each waiter its arrival sequence (order within equal priority/readiness). */
  seq: string;
  /** STREAM of grant/end entries (one per grant, listing its devices) in lock-ownership order. */
  timeline: string;
  /** STRING: until when (ms, server time) devices without a token go only to holders taking them
   *  back after Redis lost the lock's state; absent = state lost (or never declared fresh). */
  grace: string;
}

export function lockKeys(prefix: string): LockKeys {
  const base = `${prefix}lock:`;
  return {
    base,
    waiterData: `${base}waiter-data`,
    leases: `${base}leases`,
    seq: `${base}seq`,
    timeline: `${base}timeline`,
    grace: `${base}grace`,
  };
}

/** HASH per device: holder ('' when free), job, stage, waiter, leaseUntil, grantedAt; token (last
 *  fencing token issued, never deleted); endedToken and endReason of the last hold that ended. */
export const deviceKey = (keys: LockKeys, device: string): string => `${keys.base}dev:${device}`;
/** LIST per waiter: the grant ("g" + JSON) or cancel marker ("c") its BLPOP waits for. */
export const wakeKey = (keys: LockKeys, waiterId: string): string => `${keys.base}wake:${waiterId}`;
