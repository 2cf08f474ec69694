import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { defineScripts, runScript } from '../scripts.js';
const url = 'redis://127.0.0.1:6379';
const r = new Redis(url),
  rb = new Redis(url),
  r2 = new Redis(url);
defineScripts(r);
defineScripts(r2);
const base = 'qraw' + process.pid + ':lock:';
const K = [base + 'waiters', base + 'leases', base + 'timeline', base + 'waiter-data'];
const rec = JSON.stringify({
  devs: ['h0', 'h1'],
  job: 'j',
  stage: 's',
  holder: 'h',
  prio: 0,
  ready: 0,
  lease: 30000,
  ttl: 15000,
});
const acq = (c: Redis, id: string) =>
  runScript(c, 'acquire-5', [...K, base + 'seq'], [base, 100000, id, rec, 'wait']);
let cur = JSON.parse((await acq(r, 'w0'))[1]);
const med = (x: number[]) => x.sort((p, q) => p - q)[Math.floor(x.length / 2)]!.toFixed(3);
const rel: number[] = [],
  wake: number[] = [],
  ping: number[] = [],
  triv: number[] = [];
r.defineCommand('trivLock', { numberOfKeys: 4, lua: "return {0, '[]'}" });
for (let i = 1; i < 3000; i++) {
  await acq(r2, 'w' + i);
  let tw = 0;
  const p = rb.blpop(base + 'wake:w' + i, 0).then((m) => {
    tw = performance.now();
    return m;
  });
  await r2.ping();
  const t0 = performance.now();
  await runScript(r, 'release-4', K, [base, 100000, 'released', '0', 'h0', cur.t[0], 'h1', cur.t[1]]);
  const t1 = performance.now();
  const m = await p;
  cur = JSON.parse(m![1].slice(1));
  const tp = performance.now();
  await r.ping();
  const tp2 = performance.now();
  const tt = performance.now();
  await (r as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>).trivLock!(
    ...K,
    base,
    100000,
    'released',
    '0',
    'h0',
    1,
    'h1',
    2,
  );
  const tt2 = performance.now();
  if (i > 300) {
    rel.push(t1 - t0);
    wake.push(tw - t0);
    ping.push(tp2 - tp);
    triv.push(tt2 - tt);
  }
}
console.log('release rt', med(rel), 'wake', med(wake), 'ping', med(ping), 'trivial script rt', med(triv));
for (const k of await r.keys(base + '*')) await r.del(k);
r.disconnect();
rb.disconnect();
r2.disconnect();
