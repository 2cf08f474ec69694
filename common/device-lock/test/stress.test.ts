// Randomised concurrent stress: 8 clients (own connections) × 50 rounds × random subsets of
// 4 devices, random priorities, some holders that crash (never release, lease lapses) and a
// sweeper. Then the recorded timeline must show, per device, no two holds overlapping.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { DeviceLockService } from '../device-lock-service.js';
import { lockKeys } from '../keys.js';
import { AcquireTimeoutError, LockLostError } from '../errors.js';
import { FencingGuard } from '../fencing-guard.js';
import { recordsOf } from '../timeline.js';
import type { Grant, TimelineInterval } from '../types.js';
import { LockFixture, sleep } from './helpers.js';

const fx = new LockFixture();
after(() => fx.close());

const DEVICES = ['s0', 's1', 's2', 's3'];
const CLIENTS = 8;
// LOCK_STRESS_ROUNDS raises the rounds for a soak run; the default keeps the suite fast.
const ROUNDS = Number(process.env.LOCK_STRESS_ROUNDS ?? 50);

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Tally {
  grants: Map<string, number>;
  /** Highest token per device that a live holder presented to the guard. Crashed holders never
   * reach the engine, so only these tokens fence a zombie out. */
  topLive: Map<string, number>;
  crashes: Map<string, number>;
  timeouts: number;
  /** Grants of holders that "crashed": they come back at the end and try to use them. */
  zombies: Grant[];
}

const guard = new FencingGuard();

async function client(locks: DeviceLockService, id: number, held: Map<string, number>, tally: Tally) {
  const rand = rng(1000 + id);
  for (let round = 0; round < ROUNDS; round++) {
    let devices = DEVICES.filter(() => rand() < 0.5);
    if (devices.length === 0) devices = [DEVICES[Math.floor(rand() * DEVICES.length)] as string];
    const crash = rand() < 0.08;
    // Some waits give up quickly: cancellations race grants (a grant that wins is kept).
    const impatient = rand() < 0.1;
    let g: Grant;
    try {
      g = await locks.acquire({
        devices,
        job: `job-${id}`,
        stage: `round-${round}`,
        holder: `client-${id}`,
        priority: Math.floor(rand() * 3),
        readiness: rand() < 0.5 ? 1 : 0,
        leaseMs: crash ? 40 : 10_000,
        ...(impatient ? { timeoutMs: Math.floor(rand() * 5) + 1 } : {}),
      });
    } catch (err) {
      assert.ok(impatient && err instanceof AcquireTimeoutError, `unexpected ${String(err)}`);
      tally.timeouts++;
      continue;
    }
    for (const d of devices) tally.grants.set(d, (tally.grants.get(d) ?? 0) + 1);
    if (crash) {
      // The holder dies at once (before onload): it never releases; the lease must lapse. Its
      // grant may even reach it after the lapse: only live holders are checked below.
      for (const d of devices) tally.crashes.set(d, (tally.crashes.get(d) ?? 0) + 1);
      tally.zombies.push(g);
      continue;
    }
    // The engine's onload: a live holder's fresh tokens are always accepted.
    assert.ok(guard.acceptAll(g.tokens), `client ${id}: fresh tokens accepted`);
    for (const d of devices) tally.topLive.set(d, Math.max(tally.topLive.get(d) ?? 0, g.tokens[d] ?? 0));
    for (const d of devices) {
      // In-process mutual exclusion: nobody else (alive) uses a device we were granted.
      assert.equal(
        held.get(d),
        undefined,
        `${d} granted to client ${id} while client ${held.get(d)} uses it`,
      );
    }
    for (const d of devices) held.set(d, id);
    if (rand() < 0.5) await sleep(rand() * 2);
    for (const d of devices) held.delete(d);
    const r = await locks.release(g);
    assert.deepEqual(r.lost, [], 'a live holder with a long lease keeps its devices');
  }
}

function checkDevice(device: string, intervals: TimelineInterval[], tally: Tally): void {
  const list = intervals.filter((i) => i.device === device).sort((a, b) => a.token - b.token);
  assert.equal(list.length, tally.grants.get(device) ?? 0, `${device}: every grant recorded`);
  const base = (list[0]?.token ?? 1) - 1; // tokens start from a time floor (lock-core.lua)
  list.forEach((iv, k) => {
    assert.equal(iv.token, base + k + 1, `${device}: consecutive tokens, each once`);
    assert.notEqual(iv.end, null, `${device}: every hold ended`);
  });
  for (let a = 0; a < list.length; a++) {
    for (let b = a + 1; b < list.length; b++) {
      const x = list[a] as TimelineInterval;
      const y = list[b] as TimelineInterval;
      assert.ok((x.end ?? Infinity) <= y.start, `${device}: token ${x.token} overlaps token ${y.token}`);
    }
  }
  const lapsed = list.filter((i) => i.reason === 'lapsed').length;
  assert.equal(lapsed, tally.crashes.get(device) ?? 0, `${device}: each crashed hold lapsed`);
}

describe('device lock: concurrent stress', () => {
  it('never records two overlapping holds on one device', async (t) => {
    const services = Array.from({ length: CLIENTS }, () => fx.service({ waiterTtlMs: 3000 }));
    const sweeper = services[0] as DeviceLockService;
    const stopSweeper = sweeper.startSweeper(20);
    const held = new Map<string, number>();
    const tally: Tally = {
      grants: new Map(),
      topLive: new Map(),
      crashes: new Map(),
      timeouts: 0,
      zombies: [],
    };
    try {
      await Promise.all(services.map((s, i) => client(s, i, held, tally)));
      // Let the last crashed holds lapse.
      while ((await Promise.all(DEVICES.map((d) => sweeper.inspect(d)))).some((s) => s.hold)) await sleep(20);
    } finally {
      stopSweeper();
    }
    const { intervals, cursor } = await sweeper.readTimeline({ limit: 100_000 });
    assert.equal(cursor, null);
    for (const d of DEVICES) checkDevice(d, intervals, tally);
    assert.deepEqual(await sweeper.listWaiters(), [], 'no waiter left behind');
    // Crashed holders wake up late: the engine refuses their token on every device a live holder
    // used since (when only other crashed holders followed, the engine never saw a newer token),
    // and renew tells them the lease lapsed in every case.
    let fenced = 0;
    for (const z of tally.zombies) {
      for (const [d, token] of Object.entries(z.tokens)) {
        if ((tally.topLive.get(d) ?? 0) > token) {
          assert.equal(guard.accept(d, token), false, `stale ${d}#${token}`);
          fenced++;
        }
      }
      await assert.rejects(sweeper.renew(z), LockLostError);
    }
    const crashes = [...tally.crashes.values()].reduce((a, b) => a + b, 0);
    t.diagnostic(
      `${intervals.length} device holds, ${crashes} lapsed, ${tally.timeouts} waits timed out, ${fenced} zombie tokens fenced`,
    );

    // Stream order is the order of ownership: per device, grant t / end t / grant t+1 / ...
    const raw = await fx.redis.xrange(lockKeys(fx.prefix).timeline, '-', '+');
    const last = new Map<string, { e: string; t: number }>();
    for (const f of raw.flatMap(([, flat]) => recordsOf(flat).map((m) => Object.fromEntries(m)))) {
      const tokens = JSON.parse(f.t as string) as number[];
      (JSON.parse(f.d as string) as string[]).forEach((d, i) => {
        const prev = last.get(d);
        const t = tokens[i] as number;
        if (f.e === 'grant')
          assert.ok(!prev || (prev.e === 'end' && prev.t === t - 1), `${d}: grant ${t} after end`);
        else assert.ok(prev && prev.e === 'grant' && prev.t === t, `${d}: end ${t} follows its grant`);
        last.set(d, { e: f.e as string, t });
      });
    }
  });
});
