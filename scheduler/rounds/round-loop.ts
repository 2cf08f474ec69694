/**
 * The scheduler's loop: while this process holds the lease it runs a round at least every
 * `intervalMs` and at once when woken (a submission, a requeue, a finished job, a node change — the
 * `<prefix>scheduler` channel), never two at a time; a wake-up during a round runs one more after
 * it. Without the lease it stands by and tries to take it every `intervalMs`.
 *
 * A round: read the snapshot (a few set-based queries) → schedule() → write the decisions in one
 * transaction under the epoch → announce. Every crash guarantee comes from that order: nothing
 * reaches Redis or a node before the commit, and the queue is the `queued` rows themselves.
 *
 * The lease is PostgreSQL's alone, and so is its renewal: a timer renews it every third of the
 * lease whether a round is running or not, so no round, however slow, lets it lapse. A round's
 * Redis work is best-effort besides (publish-round.ts). Before, the lease was renewed only between
 * rounds, and a round that waited on Redis while it was down (ioredis's reconnection attempts, up
 * to 8 s a command) outlasted the 5 s lease: leadership passed to the standby, whose rounds waited
 * the same way, and so on for as long as Redis was away (a QA pass saw the epoch go 2 → 5 in 13 s).
 */
import type { Redis } from 'ioredis';
import type pg from 'pg';
import type { Logger } from '../../common/logger.js';
import type { RedisNames } from '../../common/queues.js';
import { poolDemand } from '../core/demand.js';
import { schedule } from '../core/schedule.js';
import type { Policy, PreemptDecision } from '../core/types.js';
import { decayUsage } from '../core/usage-decay.js';
import { applyDecisions, DeposedError, type UsageWrite } from './apply-decisions.js';
import { acquireLease, releaseLease } from './leader.js';
import { RoundPublisher } from './publish-round.js';
import { readSnapshot, type SnapshotRead } from './read-snapshot.js';
import { ProfileCache } from './profile-cache.js';

export interface RoundLoopOptions {
  holder: string;
  policy: Policy;
  intervalMs: number;
  leaseMs: number;
  heartbeatTimeoutMs: number;
  usageHalfLifeSeconds: number;
  /** Test-only: `crash_in_round` SIGKILLs the leader between its decisions and their commit. */
  fault?: string;
}

/** One round as the leader ran it: seconds per phase, and what it decided. */
export interface RoundReport {
  seconds: { read: number; schedule: number; apply: number; publish: number; total: number };
  placed: number;
  preempted: number;
  /** The reason of each notice the round committed (`preempted` of them). */
  noticeReasons: PreemptDecision['reason'][];
}

export interface RoundStats {
  epoch: number | null;
  rounds: number;
  lastRoundMs: number;
  placed: number;
}

export function startRoundLoop(deps: {
  pool: pg.Pool;
  redis: Redis;
  subscriber: Redis;
  names: RedisNames;
  logger: Logger;
  options: RoundLoopOptions;
  onRound?: (r: RoundReport) => void;
}): { stats: RoundStats; close(): Promise<void> } {
  const { pool, redis, names, logger, options } = deps;
  const stats: RoundStats = { epoch: null, rounds: 0, lastRoundMs: 0, placed: 0 };
  let running = false;
  let again = false;
  let closed = false;
  let leaseCheckedAt = 0;
  let usageWrittenAt = 0;
  // The leader's copy of its jobs' recent profiles, fed by new rows each round; a new term starts empty.
  let profiles = new ProfileCache();
  const publisher = new RoundPublisher(redis, names, logger);
  let leaseCall: Promise<boolean> | null = null;

  /** Whether this process holds the lease; renews it once a third of it has passed. One call at a time. */
  function holdLease(): Promise<boolean> {
    if (stats.epoch !== null && Date.now() - leaseCheckedAt < options.leaseMs / 3)
      return Promise.resolve(true);
    return (leaseCall ??= takeOrRenew().finally(() => (leaseCall = null)));
  }

  async function takeOrRenew(): Promise<boolean> {
    // From before the statement: the lease runs from some moment during it.
    const askedAt = Date.now();
    const l = await acquireLease(pool, options.holder, options.leaseMs);
    leaseCheckedAt = askedAt;
    if (!l) {
      if (stats.epoch !== null) logger.warn({ epoch: stats.epoch }, 'lost the scheduler lease');
      stats.epoch = null;
      profiles = new ProfileCache();
      return false;
    }
    if (l.epoch !== stats.epoch) logger.info({ epoch: l.epoch, holder: options.holder }, 'scheduler leader');
    stats.epoch = l.epoch;
    return true;
  }

  function usageWrites(read: SnapshotRead): UsageWrite[] {
    // Decay and accumulate every 5 s at most: usage is a slow signal, rows need not churn each round.
    if (read.now - usageWrittenAt < 5000) return [];
    usageWrittenAt = read.now;
    const held = new Map<string, { devices: number; memoryBytes: number }>();
    for (const r of read.snapshot.running) {
      const k = `${r.tenantId}|${r.pool}`;
      const h = held.get(k) ?? { devices: 0, memoryBytes: 0 };
      h.devices += r.devices.length;
      h.memoryBytes += r.devices.length * r.plan.deviceBytes;
      held.set(k, h);
    }
    const out: UsageWrite[] = [];
    for (const k of new Set([...held.keys(), ...read.usageRows.keys()])) {
      const prev = read.usageRows.get(k) ?? { deviceSeconds: 0, memoryByteSeconds: 0, updatedAt: read.now };
      const next = decayUsage(
        prev,
        held.get(k) ?? { devices: 0, memoryBytes: 0 },
        (read.now - prev.updatedAt) / 1000,
        options.usageHalfLifeSeconds,
      );
      const [tenantId, p] = k.split('|') as [string, string];
      out.push({ tenantId, pool: p, ...next });
    }
    return out;
  }

  async function round(): Promise<void> {
    if (!(await holdLease())) return;
    // The term this round decides in: a renewal that finds the lease lost meanwhile clears
    // stats.epoch, and the database refuses this epoch's decisions then anyway (DeposedError).
    const epoch = stats.epoch!;
    const started = performance.now();
    const read = await readSnapshot(pool, options.heartbeatTimeoutMs, profiles);
    const readAt = performance.now();
    const d = schedule(read.snapshot, options.policy, read.now);
    const scheduledAt = performance.now();
    const reasons = d.queue
      .filter((q) => read.storedReasons.get(q.jobId) !== q.waitReason)
      .map((q) => ({ jobId: q.jobId, reason: q.waitReason }));
    if (options.fault === 'crash_in_round' && d.place.length > 0) process.kill(process.pid, 'SIGKILL');
    const applied = await applyDecisions(pool, { holder: options.holder, epoch }, d, {
      reasons,
      usage: usageWrites(read),
      graceSeconds: options.policy.preemptGraceSeconds,
      nodeOf: new Map(read.snapshot.running.map((r) => [r.id, r.nodeId])),
    });
    const appliedAt = performance.now();
    await publisher.publish(applied, d, read.now, poolDemand(read.snapshot, d));
    const ended = performance.now();
    const ms = ended - started;
    const reasonOf = new Map(d.preempt.map((p) => [p.jobId, p.reason]));
    stats.rounds++;
    stats.lastRoundMs = ms;
    stats.placed += applied.placed;
    deps.onRound?.({
      seconds: {
        read: (readAt - started) / 1000,
        schedule: (scheduledAt - readAt) / 1000,
        apply: (appliedAt - scheduledAt) / 1000,
        publish: (ended - appliedAt) / 1000,
        total: ms / 1000,
      },
      placed: applied.placed,
      preempted: applied.noticed.length,
      noticeReasons: applied.noticed.flatMap((n) => reasonOf.get(n.jobId) ?? []),
    });
    if (applied.placed || applied.noticed.length || applied.takenBack)
      logger.info(
        {
          epoch: stats.epoch,
          placed: applied.placed,
          preempted: applied.noticed.map((n) => n.jobId),
          takenBack: applied.takenBack,
          ms: Math.round(ms),
        },
        'round',
      );
  }

  async function run(): Promise<void> {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        await round();
      } while (again && !closed);
    } catch (err) {
      if (err instanceof DeposedError) {
        logger.warn({ epoch: err.epoch }, 'deposed: a newer leader holds the lease; decisions discarded');
        stats.epoch = null;
      } else logger.warn({ err }, 'round failed');
    } finally {
      running = false;
    }
  }

  const timer = setInterval(() => void run(), options.intervalMs);
  // Renewal on its own clock while leading (a standby takes the lease in its rounds). Checked every
  // sixth of the lease: holdLease renews at a third, so a late tick still leaves two thirds.
  const leaseTimer = setInterval(
    () => {
      if (closed || stats.epoch === null) return;
      holdLease().catch((err: unknown) => logger.warn({ err }, 'scheduler lease renewal failed'));
    },
    Math.max(50, Math.floor(options.leaseMs / 6)),
  );
  void deps.subscriber.subscribe(names.schedulerChannel);
  deps.subscriber.on('message', (channel) => {
    if (channel === names.schedulerChannel) void run();
  });
  void run();

  return {
    stats,
    async close() {
      closed = true;
      clearInterval(timer);
      clearInterval(leaseTimer);
      while (running || leaseCall) await new Promise((r) => setTimeout(r, 20));
      if (stats.epoch !== null) await releaseLease(pool, options.holder).catch(() => undefined);
    },
  };
}
