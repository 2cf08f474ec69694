// Server-side time of release(+grant) per script variant on a private Redis.
import { Redis } from 'ioredis';
import { readFileSync } from 'node:fs';
const r = new Redis('redis://127.0.0.1:6390');
async function usec(): Promise<number> {
  const m = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await r.info('commandstats'));
  return m ? Number(m[2]) : 0;
}
const dir = 'scheduler/device-lock/lua/';
const core0 = readFileSync(dir + 'includes/lock-core.lua', 'utf8');
const build = (name: string, core: string) =>
  readFileSync(dir + name + '.lua', 'utf8').replace('--- @include "lock-core"', () => core);
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
async function run(label: string, core: string, relPatch: (s: string) => string = (s) => s) {
  const sa = (await r.script('LOAD', build('acquire-5', core))) as string;
  const sr = (await r.script('LOAD', relPatch(build('release-4', core)))) as string;
  const base = 'v' + label + ':lock:';
  const K = [base + 'waiters', base + 'leases', base + 'timeline', base + 'waiter-data'];
  const acq = async (id: string) =>
    (await r.evalsha(sa, 5, ...K, base + 'seq', base, 100000, id, rec, 'wait')) as [number, string];
  let cur = JSON.parse((await acq('w0'))[1]);
  let tA = 0,
    tR = 0,
    n = 0;
  for (let i = 1; i < 1500; i++) {
    let u0 = await usec();
    await acq('w' + i);
    let u1 = await usec();
    tA += u1 - u0;
    u0 = await usec();
    await r.evalsha(sr, 4, ...K, base, 100000, 'released', '0', 'h0', cur.t[0], 'h1', cur.t[1]);
    u1 = await usec();
    tR += u1 - u0;
    n++;
    const msg = await r.lpop(base + 'wake:w' + i);
    if (!msg) throw new Error(label + ': no grant');
    cur = JSON.parse(msg.slice(1));
  }
  console.log(
    label.padEnd(22),
    'acquire(queue)',
    (tA / n).toFixed(1),
    'us; release+grant',
    (tR / n).toFixed(1),
    'us',
  );
  for (const k of await r.keys(base + '*')) await r.del(k);
}
const XADD = "redis.call('XADD', timelineKey, 'MAXLEN', '~', timelineMax, '*', ...)";
const same = (c: string) =>
  c
    .replace(
      "log('e', 'grant', 'd', d, 't', t, 'h', w.holder, 'j', w.job, 's', w.stage, 'a', now, 'w', w.id)",
      "log('e', 'grant', 'd', d, 't', t, 'h', w.holder, 'j', w.job, 's', w.stage, 'w', w.id, 'a', now, 'b', '', 'r', '')",
    )
    .replace(
      "log('e', 'end', 'd', cjson.encode(g.d), 't', '[' .. table.concat(g.t, ',') .. ']', 'h', g.r.holder,\n      'j', g.r.job, 's', g.r.stage, 'a', g.r.grantedAt, 'b', now, 'r', reason, 'w', w)",
      "log('e', 'end', 'd', cjson.encode(g.d), 't', '[' .. table.concat(g.t, ',') .. ']', 'h', g.r.holder, 'j', g.r.job, 's', g.r.stage, 'w', w, 'a', g.r.grantedAt, 'b', now, 'r', reason)",
    );
const variants: [string, string][] = [
  ['full', core0],
  ['no-xadd', core0.replace(XADD, '')],
  ['no-maxlen', core0.replace(XADD, "redis.call('XADD', timelineKey, '*', ...)")],
  ['samefields', same(core0)],
  ['samefields-no-maxlen', same(core0).replace(XADD, "redis.call('XADD', timelineKey, '*', ...)")],
];
if (!same(core0).includes("'b', '', 'r', ''") || !same(core0).includes("'w', w, 'a', g.r.grantedAt"))
  throw new Error('patch failed');
for (let rep = 0; rep < 2; rep++) for (const [l, c] of variants) await run(l + rep, c);
r.disconnect();
