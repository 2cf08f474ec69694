/**
 * TIMESHARE_API_WORKERS=2: one port served by two worker processes. Submissions land on both,
 * /metrics sums both, a SIGKILLed worker is replaced without the API going away, and SIGTERM to the
 * primary stops the whole group.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { freePort, startProcess, waitForHttp, type Proc } from '../helpers/processes.js';
import { deleteKeys, testPrefix } from '../helpers/redis.js';
import { testEnv } from '../helpers/api-harness.js';

let db: TestDatabase;
let prefix: string;
let proc: Proc | null = null;

before(async () => {
  db = await createTestDatabase();
  prefix = testPrefix();
});
after(async () => {
  await proc?.kill('SIGKILL');
  await db.drop();
  await deleteKeys(prefix);
});

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const task of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/))
    if (task) out.push(Number(task));
  return out;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until<T>(what: string, fn: () => Promise<T | null> | T | null, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== null && v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test(
  'two API workers share the port, sum their metrics, and survive a worker crash',
  { timeout: 120_000 },
  async () => {
    const port = await freePort();
    const env = testEnv(db.url, prefix, {
      PORT: String(port),
      LOG_LEVEL: 'warn',
      TIMESHARE_API_WORKERS: '2',
    });
    const url = `http://127.0.0.1:${port}`;
    proc = startProcess('api/main.ts', env);
    await waitForHttp(`${url}/readyz`, proc);
    const primary = proc.child.pid!;
    const workers = await until('two workers', () => {
      const w = childrenOf(primary);
      return w.length === 2 ? w : null;
    });

    const admin = { Authorization: `Bearer ${env.TIMESHARE_ADMIN_KEY}`, 'Content-Type': 'application/json' };
    const tenant = (await (
      await fetch(`${url}/v1/tenants`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ name: 'c' }),
      })
    ).json()) as { apiKey: string };
    const { token } = (await (
      await fetch(`${url}/v1/auth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ apiKey: tenant.apiKey }),
      })
    ).json()) as { token: string };
    // Separate connections (no keep-alive reuse): the primary deals them out to both workers.
    const submit = () =>
      fetch(`${url}/v1/jobs`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/json',
          Connection: 'close',
        },
        body: JSON.stringify({ name: 'c', workflow: { task: { name: 'addition' } } }),
      });
    const N = 12; // under the default quota of 20 active jobs, leaving room for the submissions below
    const statuses = await Promise.all(Array.from({ length: N }, async () => (await submit()).status));
    assert.deepEqual(statuses, Array(N).fill(201));

    const submitted = async () => {
      const res = await fetch(`${url}/metrics`, { headers: { Connection: 'close' } });
      const text = await res.text();
      assert.equal(res.status, 200, text);
      return Number(/^timeshare_jobs_submitted_total (\d+)/m.exec(text)?.[1]);
    };
    // Whichever worker answers, the count covers both.
    for (let i = 0; i < 4; i++) assert.equal(await submitted(), N);

    process.kill(workers[0]!, 'SIGKILL');
    const replaced = await until('a replacement worker', () => {
      const w = childrenOf(primary);
      return w.length === 2 && !w.includes(workers[0]!) ? w : null;
    });
    // The replacement is still loading: it has served nothing, so a scrape meanwhile sums the
    // survivor alone instead of waiting on a worker that cannot answer yet (a 500 after 5 s).
    const survivorCount = await submitted();
    assert.ok(survivorCount >= 0 && survivorCount <= N, `survivor's count ${survivorCount}`);
    await until('the API answering again', async () => ((await submit()).status === 201 ? true : null));
    assert.ok(alive(primary));

    // Scrapes while a worker shuts down: its channel closes before it exits, and a scrape in
    // between must leave it out, not write to the closed channel (that error ended the primary).
    let scraping = true;
    const scrapes = (async () => {
      let n = 0;
      while (scraping) {
        await fetch(`${url}/metrics`, {
          headers: { Connection: 'close' },
          signal: AbortSignal.timeout(10_000),
        }).then(
          (r) => r.text(),
          // The stopping worker's connections may be cut, and one caught in its hand-off by the
          // cluster may wait unanswered: a scraper's timeout ends it, as Prometheus's does.
          () => null,
        );
        n++;
      }
      return n;
    })();
    const stopping = replaced[0]!;
    process.kill(stopping, 'SIGTERM');
    const after = await until('a worker in place of the stopped one', () => {
      const w = childrenOf(primary);
      return w.length === 2 && !w.includes(stopping) ? w : null;
    });
    scraping = false;
    assert.ok((await scrapes) > 0);
    assert.ok(alive(primary), 'the primary outlived the scrapes');
    // Both workers may be replacements still loading: the port refuses until one listens.
    await until('the API answering again', async () =>
      (await submit().catch(() => null))?.status === 201 ? true : null,
    );
    assert.ok(Number.isFinite(await submitted()));

    await proc.kill('SIGTERM');
    assert.equal(await proc.exited, 0);
    for (const pid of after) assert.equal(alive(pid), false, `worker ${pid} stopped with the primary`);
  },
);
