// Distributed device lock (DESIGN §3): one Redis hash per device, all-or-nothing group grants,
// fencing tokens, leases, ordered waiters and a timeline. The real work happens in the Lua
// scripts under lua/ (see their headers and lua/includes/lock-core.lua for the invariants);
// this class validates input, calls them, and waits for handoffs on a dedicated connection.
//
// Waiting: a queued acquire BLPOPs its own wake list. Whoever frees devices (release, renew,
// sweeper, cancel, another waiter's heartbeat) runs the grant pass inside its script and pushes
// the grant there, so a handoff costs one script round trip plus the BLPOP wake-up. While it
// waits, the waiter heartbeats (touch-waiter), which keeps its entry alive and ends lapsed leases.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { BlockingPool } from './blocking-pool.js';
import {
  AcquireAbortedError,
  AcquireTimeoutError,
  DeviceLockError,
  WaiterExpiredError,
  errorFromScript,
} from './errors.js';
import { lockKeys, wakeKey, type LockKeys } from './keys.js';
import { checkDevices, checkNumber, checkText, compileOptions, type CompiledOptions } from './options.js';
import { defineScripts, runScript, type ScriptName } from './scripts.js';
import { inspectDevice, listWaiters, readTimeline } from './lock-reads.js';
import type {
  AcquireRequest,
  DeviceLockOptions,
  DeviceState,
  Grant,
  ReleaseResult,
  SweepStats,
  TimelinePage,
  TimelineQuery,
  WaiterInfo,
} from './types.js';

interface GrantWire {
  w: string;
  d: string[];
  t: number[];
  u: number;
  a: number;
}

export class DeviceLockService {
  readonly options: CompiledOptions;
  private readonly keys: LockKeys;
  private readonly pool: BlockingPool;

  /** `redis` is the caller's client (not closed by `close()`); it must have no commandTimeout
   *  shorter than a script run. Blocking connections are duplicated from it. */
  constructor(
    private readonly redis: Redis,
    options: DeviceLockOptions,
  ) {
    this.options = compileOptions(options);
    this.keys = lockKeys(this.options.prefix);
    this.pool = new BlockingPool(redis, this.options.maxIdleBlockingConnections);
    defineScripts(redis);
  }

  private run(name: ScriptName, args: readonly (string | number)[]) {
    const { leases, timeline, waiterData, seq } = this.keys;
    const keys = [leases, timeline, waiterData];
    if (name === 'acquire-4') keys.push(seq);
    return runScript(this.redis, name, keys, [this.keys.base, this.options.timelineMaxLen, ...args]);
  }

  /** Grants every device in `req.devices` at once, queueing behind the policy's order if needed. */
  async acquire(req: AcquireRequest): Promise<Grant> {
    checkDevices(req.devices);
    for (const f of ['job', 'stage', 'holder'] as const) checkText(f, req[f]);
    if (req.waiterId !== undefined) checkText('waiterId', req.waiterId);
    if (req.timeoutMs !== undefined && !(req.timeoutMs >= 0 && Number.isFinite(req.timeoutMs)))
      throw new TypeError(`timeoutMs must be a finite number >= 0, got ${req.timeoutMs}`);
    const priority = req.priority ?? 0;
    const readiness = req.readiness ?? 0;
    checkNumber('priority', priority);
    checkNumber('readiness', readiness);
    const leaseMs = req.leaseMs ?? this.options.defaultLeaseMs;
    if (!Number.isSafeInteger(leaseMs) || leaseMs <= 0)
      throw new TypeError(`leaseMs must be a positive integer`);
    const waiterId = req.waiterId ?? `${req.holder}:${randomUUID()}`;
    const devices = [...req.devices];
    if (req.signal?.aborted) throw new AcquireAbortedError(waiterId, devices);
    const mode = req.timeoutMs === 0 ? 'try' : 'wait';
    const record = {
      devs: devices,
      job: req.job,
      stage: req.stage,
      holder: req.holder,
      prio: priority,
      ready: readiness,
      lease: leaseMs,
      ttl: this.options.waiterTtlMs,
      ...(req.reclaim ? { reclaim: true } : {}),
      grace: this.options.wipeGraceMs,
    };
    const [code, payload] = await this.run('acquire-4', [waiterId, JSON.stringify(record), mode]);
    if (code < 0) throw errorFromScript(code, payload, { waiterId, devices });
    if (code === 1) return this.toGrant(payload, req, leaseMs);
    req.onQueued?.(waiterId);
    return this.waitForGrant(waiterId, devices, req, leaseMs);
  }

  private async waitForGrant(
    waiterId: string,
    devices: string[],
    req: AcquireRequest,
    leaseMs: number,
  ): Promise<Grant> {
    const conn = this.pool.take();
    const wake = wakeKey(this.keys, waiterId);
    let cancelledBy: 'timeout' | 'abort' | null = null;
    const cancel = (why: 'timeout' | 'abort') => {
      if (cancelledBy) return;
      cancelledBy = why;
      // The script removes the waiter and pushes "c", which ends the BLPOP below; if the
      // waiter was granted first, the grant is what the BLPOP gets instead.
      this.cancelWaiter(waiterId).catch(() => {});
    };
    const timer =
      req.timeoutMs !== undefined ? setTimeout(() => cancel('timeout'), req.timeoutMs) : undefined;
    const onAbort = () => cancel('abort');
    req.signal?.addEventListener('abort', onAbort, { once: true });
    if (req.signal?.aborted) onAbort(); // aborted while the acquire script was in flight
    // Heartbeats run on a client timer, not as BLPOP timeouts: Redis only checks blocking
    // timeouts when its event loop wakes (up to 1/hz = 100 ms late), too coarse for short ttls.
    const heartbeat = setInterval(
      () => void this.run('touch-waiter-3', [waiterId, this.options.waiterTtlMs]).catch(() => {}),
      Math.max(10, Math.floor(this.options.waiterTtlMs / 3)),
    );
    let healthy = true;
    try {
      for (;;) {
        // No timeout: a grant ("g"), a cancel ("c") or a dropped-waiter marker ("x") ends it.
        const msg = await conn.blpop(wake, 0);
        if (msg === null) continue;
        const body = msg[1];
        if (body === 'x') throw new WaiterExpiredError(waiterId);
        if (body === 'c') {
          if (cancelledBy === 'timeout') throw new AcquireTimeoutError(waiterId, devices, req.timeoutMs ?? 0);
          throw new AcquireAbortedError(waiterId, devices);
        }
        const grant = this.toGrant(body.slice(1), req, leaseMs);
        if (cancelledBy === 'abort') {
          await this.release(grant);
          throw new AcquireAbortedError(waiterId, devices);
        }
        return grant; // a grant that raced the timeout is still a valid grant
      }
    } catch (err) {
      if (!(err instanceof DeviceLockError)) {
        healthy = false;
        await this.cancelWaiter(waiterId).catch(() => {});
      }
      throw err;
    } finally {
      clearInterval(heartbeat);
      if (timer) clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      this.pool.give(conn, healthy);
    }
  }

  private toGrant(payload: string, req: AcquireRequest, leaseMs: number): Grant {
    const g = JSON.parse(payload) as GrantWire;
    const tokens: Record<string, number> = {};
    g.d.forEach((d, i) => (tokens[d] = Number(g.t[i])));
    return {
      waiterId: g.w,
      devices: g.d,
      tokens,
      job: req.job,
      stage: req.stage,
      holder: req.holder,
      leaseMs,
      leaseUntil: g.u,
      grantedAt: g.a,
    };
  }

  /** device, token, device, token, ... as the release and renew scripts take them. */
  private pairsOf(grant: Grant): (string | number)[] {
    return grant.devices.flatMap((d) => [d, grant.tokens[d] ?? -1]);
  }

  /** Extends the lease of every device of the grant; LockLostError if any was lapsed or revoked. */
  async renew(grant: Grant, leaseMs = grant.leaseMs): Promise<Grant> {
    if (!Number.isSafeInteger(leaseMs) || leaseMs <= 0)
      throw new TypeError('leaseMs must be a positive integer');
    const [code, payload] = await this.run('renew-3', [leaseMs, ...this.pairsOf(grant)]);
    if (code < 0) throw errorFromScript(code, payload, { ...grant, devices: grant.devices });
    return { ...grant, leaseMs, leaseUntil: Number(payload) };
  }

  /** Releases the devices the grant still holds (idempotent) and hands them to waiters. */
  async release(grant: Grant): Promise<ReleaseResult> {
    const [, payload] = await this.run('release-3', ['released', '0', ...this.pairsOf(grant)]);
    const lost = parseList(payload);
    return { released: grant.devices.filter((d) => !lost.includes(d)), lost };
  }

  /** Admin/preemption: ends the current hold on these devices whoever holds them ("revoked"). */
  async revoke(devices: readonly string[]): Promise<ReleaseResult> {
    checkDevices(devices);
    const [, payload] = await this.run('release-3', ['revoked', '1', ...devices.flatMap((d) => [d, 0])]);
    const notHeld = parseList(payload);
    return { released: devices.filter((d) => !notHeld.includes(d)), lost: notHeld };
  }

  /**
   * Ends every hold and drops every waiter of `holder`, a process known to be dead (its daemon saw
   * it exit), and hands the devices on now rather than a lease and a waiter TTL later (a waiter
   * of the dead process could even be granted in between and hold the devices a lease more).
   */
  async abandonHolder(holder: string): Promise<{ holdsEnded: number; waitersDropped: number }> {
    checkText('holder', holder);
    const [, payload] = await this.run('abandon-holder-3', [holder]);
    const [holdsEnded, waitersDropped] = JSON.parse(payload) as [number, number];
    return { holdsEnded, waitersDropped };
  }

  /** Sweeper step: ends lapsed leases, drops expired waiters, grants what became grantable. */
  async expireLapsed(): Promise<SweepStats> {
    const [, payload] = await this.run('expire-lapsed-3', []);
    return JSON.parse(payload) as SweepStats;
  }

  /**
   * Says nothing holds a device of this prefix (a new prefix, or the scheduler starting with no
   * job placed or running), so no grace is needed until Redis next loses the lock's state.
   * True if this call said it first (the state had been lost or never declared).
   */
  async declareFresh(): Promise<boolean> {
    return (await this.redis.set(this.keys.grace, '0', 'NX')) === 'OK';
  }

  /** Runs expireLapsed every intervalMs until the returned function is called. */
  startSweeper(intervalMs: number, onError: (err: unknown) => void = () => {}): () => void {
    const t = setInterval(() => void this.expireLapsed().catch(onError), intervalMs);
    t.unref();
    return () => clearInterval(t);
  }

  /** Reorders a live waiter; WaiterNotFoundError once it was granted, cancelled or dropped. */
  async setPriority(waiterId: string, priority: number, readiness = 0): Promise<void> {
    checkNumber('priority', priority);
    checkNumber('readiness', readiness);
    const [code, payload] = await this.run('set-priority-3', [waiterId, priority, readiness]);
    if (code < 0) throw errorFromScript(code, payload, { waiterId, devices: [] });
  }

  /** Removes a live waiter; its acquire rejects with AcquireAbortedError. False if not waiting. */
  async cancelWaiter(waiterId: string): Promise<boolean> {
    const [code] = await this.run('cancel-waiter-3', [waiterId]);
    return code === 1;
  }

  /** A device's current hold (null when free) and the last fencing token issued for it. */
  inspect(device: string): Promise<DeviceState> {
    return inspectDevice(this.redis, this.keys, device);
  }

  /** Live waiters in the order the grant pass considers them (expired ones may still show). */
  listWaiters(): Promise<WaiterInfo[]> {
    return listWaiters(this.redis, this.keys);
  }

  /** Grant intervals from the timeline, oldest first, one per device per grant. */
  readTimeline(q: TimelineQuery = {}): Promise<TimelinePage> {
    return readTimeline(this.redis, this.keys, q);
  }

  /** Closes the blocking connections (pending waits reject); the caller's client stays open. */
  close(): void {
    this.pool.close();
  }
}

function parseList(payload: string): string[] {
  const v: unknown = JSON.parse(payload);
  return Array.isArray(v) ? (v as string[]) : [];
}
