// `npm run bench:lock`: latency of the device lock next to a plain Redis round trip, same run,
// same machine, same client library (ioredis), all in one process.
//
// - PING: the Redis round trip.
// - acquire→release: an uncontended grant and its release (two script round trips).
// - handoff: from the holder calling release() to the queued waiter's acquire() resolving with
//   the grant (release script + grant pass + BLPOP wake-up): the cost the lock adds to a switch.
//   Once with both sides in this event loop, once with the waiter in a worker thread (its own
//   event loop, as in production where holder and waiter are different processes).
//
// Each is measured twice: back to back ("busy") and after 1 ms idle ("idle", both processes
// asleep in epoll first, as a waiter blocked during a whole stage is). Ratios compare like with
// like: handoff busy / PING busy, handoff idle / PING idle.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
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

interface Samples {
  op: number[];
  /** A PING timed in the same iteration and mode as each op: the ratio is robust to load drift. */
  ping: number[];
}

async function timedPing(redis: Redis, idle: boolean): Promise<number> {
  if (idle) await sleep(1);
  const t0 = performance.now();
  await redis.ping();
  return performance.now() - t0;
}

async function timeLoop(
  n: number,
  idle: boolean,
  redis: Redis,
  op: () => Promise<unknown>,
): Promise<Samples> {
  const out: Samples = { op: [], ping: [] };
  for (let i = 0; i < WARMUP + n; i++) {
    const ping = await timedPing(redis, idle);
    if (idle) await sleep(1);
    const t0 = performance.now();
    await op();
    if (i >= WARMUP) {
      out.op.push(performance.now() - t0);
      out.ping.push(ping);
    }
  }
  return out;
}

/** Two services (own connections) pass a 2-device group back and forth. */
async function handoffs(
  a: DeviceLockService,
  b: DeviceLockService,
  conn: Map<DeviceLockService, Redis>,
  n: number,
  idle: boolean,
): Promise<Samples> {
  const out: Samples = { op: [], ping: [] };
  const req = { devices: ['bench/h0', 'bench/h1'], job: 'bench', stage: 'switch', holder: 'a' };
  let holder = a;
  let waiter = b;
  let grant: Grant = await holder.acquire(req);
  for (let i = 0; i < WARMUP + n; i++) {
    const ping = await timedPing(conn.get(holder) as Redis, idle);
    let onQueued!: () => void;
    const queued = new Promise<void>((r) => (onQueued = r));
    let grantedAt = 0;
    const next = waiter.acquire({ ...req, holder: i % 2 ? 'a' : 'b', onQueued }).then((g) => {
      grantedAt = performance.now(); // the waiter holds the devices from here on
      return g;
    });
    await queued;
    // The waiter's BLPOP was written before this PING on the waiter's other connection, so
    // Redis has it blocked by the time the PING returns: we time a real wake-up.
    await conn.get(waiter)?.ping();
    if (idle) await sleep(1);
    const t0 = performance.now();
    await holder.release(grant);
    grant = await next;
    if (i >= WARMUP) {
      out.op.push(grantedAt - t0);
      out.ping.push(ping);
    }
    [holder, waiter] = [waiter, holder];
  }
  await holder.release(grant);
  return out;
}

/** Holder here, waiter in a worker thread (own event loop, like another process). */
async function threadHandoffs(a: DeviceLockService, r1: Redis, prefix: string, n: number, idle: boolean) {
  const devices = ['bench/t0', 'bench/t1'];
  // A worker does not inherit tsx's loader: register it, then load the TypeScript module.
  const entry = new URL('./handoff-waiter.ts', import.meta.url).href;
  const boot = `import('tsx/esm/api').then((t) => { t.register(); return import(${JSON.stringify(entry)}); });`;
  const worker = new Worker(boot, { eval: true, workerData: { url, prefix, devices } });
  const next = (type: string) =>
    new Promise<{ type: string; at?: bigint }>((resolve) => {
      const on = (m: { type: string; at?: bigint }) => {
        if (m.type !== type) return;
        worker.off('message', on);
        resolve(m);
      };
      worker.on('message', on);
    });
  await next('ready');
  const out: Samples = { op: [], ping: [] };
  const req = { devices, job: 'bench', stage: 'switch', holder: 'main' };
  for (let i = 0; i < WARMUP + n; i++) {
    const ping = await timedPing(r1, idle);
    const grant = await a.acquire(req);
    const queued = next('queued');
    worker.postMessage({ type: 'queue' });
    await queued;
    const got = next('got');
    if (idle) await sleep(1);
    const t0 = process.hrtime.bigint();
    await a.release(grant);
    const { at } = await got;
    if (i >= WARMUP) {
      out.op.push(Number((at ?? t0) - t0) / 1e6);
      out.ping.push(ping);
    }
  }
  const done = next('done');
  worker.postMessage({ type: 'stop' });
  await done;
  await worker.terminate();
  return out;
}

/** Checks, outside the timed loops, that a queued waiter really sits in BLPOP at release time. */
async function blockedSample(a: DeviceLockService, b: DeviceLockService, admin: Redis, n: number) {
  const req = { devices: ['bench/s0'], job: 'bench', stage: 'check', holder: 'a' };
  let blocked = 0;
  for (let i = 0; i < n; i++) {
    const g = await a.acquire(req);
    let onQueued!: () => void;
    const queued = new Promise<void>((r) => (onQueued = r));
    const next = b.acquire({ ...req, onQueued });
    await queued;
    await admin.ping();
    const list = (await admin.client('LIST')) as string;
    if (list.split('\n').some((l) => l.includes('name=ts-lock-bench-b') && l.includes('cmd=blpop')))
      blocked++;
    await a.release(g);
    await b.release(await next);
  }
  return blocked;
}

async function main(): Promise<void> {
  const prefix = `ts-bench-${randomBytes(6).toString('hex')}:`;
  const r1 = new Redis(url, { connectionName: 'ts-lock-bench-a' });
  const r2 = new Redis(url, { connectionName: 'ts-lock-bench-b' });
  const a = new DeviceLockService(r1, { prefix });
  const b = new DeviceLockService(r2, { prefix });
  await a.declareFresh(); // a new prefix: nothing held a device before
  const conn = new Map([
    [a, r1],
    [b, r2],
  ]);
  const started = performance.now();
  try {
    const req = { devices: ['bench/r0'], job: 'bench', stage: 'rt', holder: 'a' };
    const req4 = { ...req, devices: ['bench/g0', 'bench/g1', 'bench/g2', 'bench/g3'] };
    const rows: { name: string; op: Stats; ping: Stats }[] = [];
    const add = (name: string, x: Samples) => rows.push({ name, op: stats(x.op), ping: stats(x.ping) });
    for (const idle of [false, true]) {
      const tag = idle ? 'idle' : 'busy';
      const n = idle ? Math.floor(N / 3) : N;
      add(
        `acquire→release, 1 device (${tag})`,
        await timeLoop(n, idle, r1, async () => a.release(await a.acquire(req))),
      );
      if (!idle)
        add(
          'acquire→release, 4-device group (busy)',
          await timeLoop(n, idle, r1, async () => a.release(await a.acquire(req4))),
        );
      add(`handoff, 2-device group (${tag})`, await handoffs(a, b, conn, n, idle));
      add(`handoff, waiter in a thread (${tag})`, await threadHandoffs(a, r1, prefix, n, idle));
    }
    const blocked = await blockedSample(a, b, r1, 50);

    const f = (x: number) => x.toFixed(3).padStart(7);
    console.log(
      `device-lock bench: ${N} iterations busy, ${Math.floor(N / 3)} idle (+${WARMUP} warm-up each)`,
    );
    console.log(`Redis ${url}. busy: back to back; idle: after 1 ms asleep. Each op is paired with a PING`);
    console.log('timed in the same iteration and mode; ratio = op p50 / PING p50. Times in ms.');
    console.log(
      `${'operation'.padEnd(38)} ${'p50'.padStart(7)} ${'p99'.padStart(7)} | ${'PING p50'.padStart(8)} ${'p99'.padStart(7)} | ratio`,
    );
    for (const { name, op, ping } of rows) {
      const ratio = (op.p50 / ping.p50).toFixed(2);
      console.log(
        `${name.padEnd(38)} ${f(op.p50)} ${f(op.p99)} | ${f(ping.p50).padStart(8)} ${f(ping.p99)} | ${ratio}×`,
      );
    }
    for (const { name, op, ping } of rows.filter((r) => r.name.startsWith('handoff'))) {
      const p50 = (op.p50 / ping.p50).toFixed(2);
      const p99 = (op.p99 / ping.p99).toFixed(2);
      console.log(`${name}: handoff / PING p50 ${p50}×, p99 ${p99}× (target ≤ 3×)`);
    }
    console.log(`waiter seen blocked in BLPOP at release: ${blocked}/50 sampled handoffs`);
    console.log(`total ${((performance.now() - started) / 1000).toFixed(1)} s`);
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
