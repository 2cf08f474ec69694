// `npm run bench:lock`: latency of the device lock next to a plain Redis round trip, same run,
// same machine. Figures: PING; uncontended acquire→release (two scripts); handoff = from the
// holder calling release() to the queued waiter's acquire() resolving (release script + BLPOP
// wake-up), the cost the device lock adds to every stage switch.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { DeviceLockService } from '../device-lock-service.js';
import type { Grant } from '../types.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const N = Number(process.env.BENCH_ITERATIONS ?? 3000);
const WARMUP = 200;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Stats {
  p50: number;
  p99: number;
  mean: number;
}

function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), mean: s.reduce((a, b) => a + b, 0) / s.length };
}

async function timeLoop(n: number, op: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < WARMUP + n; i++) {
    const t0 = performance.now();
    await op();
    if (i >= WARMUP) out.push(performance.now() - t0);
  }
  return out;
}

async function handoffs(a: DeviceLockService, b: DeviceLockService, n: number): Promise<number[]> {
  const out: number[] = [];
  const req = { devices: ['bench/h0', 'bench/h1'], job: 'bench', stage: 'switch', holder: 'a' };
  let holder: DeviceLockService = a;
  let waiter: DeviceLockService = b;
  let grant: Grant = await holder.acquire(req);
  for (let i = 0; i < WARMUP + n; i++) {
    let onQueued!: () => void;
    const queued = new Promise<void>((r) => (onQueued = r));
    let grantedAt = 0;
    const next = waiter.acquire({ ...req, holder: i % 2 ? 'a' : 'b', onQueued }).then((g) => {
      grantedAt = performance.now(); // the waiter holds the devices from here on
      return g;
    });
    await queued;
    await sleep(1); // let the waiter's BLPOP reach Redis: measure a real wake-up, not a queued reply
    const t0 = performance.now();
    await holder.release(grant);
    grant = await next;
    if (i >= WARMUP) out.push(grantedAt - t0);
    [holder, waiter] = [waiter, holder];
  }
  await holder.release(grant);
  return out;
}

async function main(): Promise<void> {
  const prefix = `ts-bench-${randomBytes(6).toString('hex')}:`;
  const r1 = new Redis(url);
  const r2 = new Redis(url);
  const a = new DeviceLockService(r1, { prefix });
  const b = new DeviceLockService(r2, { prefix });
  const t0 = performance.now();
  try {
    const ping = stats(await timeLoop(N, () => r1.ping()));
    const req = { devices: ['bench/r0'], job: 'bench', stage: 'rt', holder: 'a' };
    const acqRel = stats(await timeLoop(N, async () => a.release(await a.acquire(req))));
    const req4 = { ...req, devices: ['bench/g0', 'bench/g1', 'bench/g2', 'bench/g3'] };
    const acqRel4 = stats(await timeLoop(N, async () => a.release(await a.acquire(req4))));
    const handoff = stats(await handoffs(a, b, N));

    const row = (name: string, s: Stats) =>
      `${name.padEnd(34)} ${s.p50.toFixed(3).padStart(8)} ${s.p99.toFixed(3).padStart(8)} ${s.mean
        .toFixed(3)
        .padStart(8)} ${(s.p50 / ping.p50).toFixed(2).padStart(9)}×`;
    console.log(`device-lock bench: ${N} iterations each (+${WARMUP} warm-up), Redis ${url}`);
    console.log(
      `${'operation'.padEnd(34)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'mean ms'.padStart(8)} ${'p50/PING'.padStart(10)}`,
    );
    console.log(row('PING round trip', ping));
    console.log(row('acquire→release, 1 device', acqRel));
    console.log(row('acquire→release, 4-device group', acqRel4));
    console.log(row('handoff between two waiters (2 dev)', handoff));
    console.log(
      `handoff / PING: p50 ${(handoff.p50 / ping.p50).toFixed(2)}×, p99 ${(handoff.p99 / ping.p99).toFixed(2)}× (target ≤ 3×)`,
    );
    console.log(`total ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  } finally {
    a.close();
    b.close();
    let cursor = '0';
    do {
      const [next, keys] = await r1.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await r1.del(...keys);
    } while (cursor !== '0');
    await Promise.all([r1.quit(), r2.quit()]);
  }
}

await main();
