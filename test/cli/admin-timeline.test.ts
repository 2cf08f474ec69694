/**
 * `timeshare admin nodes timeline` and `admin pools timeline`: by default the last 15 minutes (a
 * node's printed the oldest 1,000 holds of the stream and nothing current), `--since` a duration or
 * an ISO time, `--limit` a page and the "more: --after …" hint to the next one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lockKeys } from '../../common/device-lock/keys.js';
import { registerTestNode } from '../helpers/test-node.js';
import { useCliFixture } from './cli-fixture.js';
import { runCli } from './run-cli.js';

const cli = useCliFixture('admin-timeline', {
  env: ({ h }) => ({ TIMESHARE_API_URL: h.api.url, TIMESHARE_ADMIN_KEY: h.adminKey }),
});
const RECENT = 5;
let node: string;

// Made by the first test that asks (a root `before` here would run ahead of the fixture's).
let made: Promise<void> | undefined;
const ready = () => (made ??= makeHolds());

async function makeHolds(): Promise<void> {
  node = (await registerTestNode(cli.h, 'timeline-node')).id;
  const { redis, names, locks } = cli.h.api.deps;
  // A hold two hours ago, written as the lock writes one (a grant entry, then its end): the
  // stream's own ids are its clock, so an old hold is one with old ids, added before any other.
  const t0 = Date.now() - 2 * 3_600_000;
  const hold = (e: 'grant' | 'end', end: number | '', reason: string) =>
    ['e', e, 'd', JSON.stringify([`${node}/0`]), 't', '[1000]', 'h', node, 'j', 'old-0', 's', 'train'].concat(
      ['w', 'old-waiter', 'a', String(t0), 'b', String(end), 'r', reason],
    );
  const stream = lockKeys(names.lockPrefix).timeline;
  await redis.xadd(stream, `${t0}-0`, ...hold('grant', '', ''));
  await redis.xadd(stream, `${t0 + 1000}-0`, ...hold('end', t0 + 1000, 'released'));
  await locks.declareFresh();
  for (let i = 0; i < RECENT; i++)
    await locks.release(
      await locks.acquire({ devices: [`${node}/0`], job: `now-${i}`, stage: 'train', holder: node }),
    );
}

const recent = Array.from({ length: RECENT }, (_, i) => `now-${i}`);

async function jobsOf(args: string[]): Promise<string[]> {
  const r = await runCli(['--json', 'admin', ...args], cli.env);
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout).data as { job: string }[]).map((d) => d.job);
}

/** Every page's jobs, following the human output's "more: --after …" hint. */
async function pagesOf(args: string[]): Promise<string[][]> {
  const pages: string[][] = [];
  let after: string[] = [];
  for (;;) {
    assert.ok(pages.length < 20, 'pages end');
    const r = await runCli(['admin', ...args, ...after], cli.env);
    assert.equal(r.code, 0, r.stderr);
    pages.push([...r.stdout.matchAll(/\b(old-0|now-\d)\b/g)].map((m) => m[1]!));
    if (after.length > 0 && pages[pages.length - 1]!.length === 0)
      assert.match(r.stdout, /no device-lock holds after that cursor|^pool /);
    const more = /^more: --after (\S+)$/m.exec(r.stdout);
    if (!more) return pages;
    after = ['--after', more[1]!];
  }
}

test('admin nodes timeline: the last 15 minutes by default; --since reaches further; --help says so', async () => {
  await ready();
  assert.deepEqual(await jobsOf(['nodes', 'timeline', node]), recent);
  assert.deepEqual(await jobsOf(['nodes', 'timeline', node, '--since', '3h']), ['old-0', ...recent]);
  const iso = new Date(Date.now() - 3 * 3_600_000).toISOString();
  assert.deepEqual(await jobsOf(['nodes', 'timeline', node, '--since', iso]), ['old-0', ...recent]);

  const human = await runCli(['admin', 'nodes', 'timeline', node], cli.env);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /now-0 .* train .* released/);
  assert.doesNotMatch(human.stdout, /old-0|more:/);
  const none = await runCli(['admin', 'nodes', 'timeline', node, '--since', '2099-01-01T00:00:00Z'], cli.env);
  assert.equal(none.stdout.trim(), 'no device-lock holds since 2099-01-01T00:00:00.000Z');

  const help = await runCli(['admin', 'nodes', 'timeline', '--help'], cli.env);
  assert.match(help.stdout, /--since <time>[\s\S]*default: 15m/);
  const typo = await runCli(['admin', 'nodes', 'timeline', node, '--since', '10 minutes'], cli.env);
  assert.equal(typo.code, 1);
  assert.match(typo.stderr, /option '--since <time>' argument '10 minutes' is invalid/);
});

test('admin nodes timeline: --limit pages, each hold once, with the "more: --after" hint', async () => {
  await ready();
  const pages = await pagesOf(['nodes', 'timeline', node, '--since', '3h', '--limit', '2']);
  // The third page is full, so the API cannot tell that nothing follows: a fourth, empty one.
  assert.deepEqual(
    pages.map((p) => p.length),
    [2, 2, 2, 0],
  );
  assert.deepEqual(pages.flat(), ['old-0', ...recent]);
  const page = JSON.parse(
    (await runCli(['--json', 'admin', 'nodes', 'timeline', node, '--limit', '2'], cli.env)).stdout,
  );
  assert.deepEqual(
    page.data.map((d: { job: string }) => d.job),
    ['now-0', 'now-1'],
  );
  assert.equal(typeof page.nextCursor, 'string', 'the API page as it is');
});

test('admin pools timeline: the same window and pages, with node names; admin pools still lists', async () => {
  await ready();
  assert.deepEqual(await jobsOf(['pools', 'timeline', 'default']), recent);
  assert.deepEqual(await jobsOf(['pools', 'timeline', 'default', '--since', '3h']), ['old-0', ...recent]);
  const pages = await pagesOf(['pools', 'timeline', 'default', '--limit', '2']);
  assert.deepEqual(pages.flat(), recent);
  assert.deepEqual(
    pages.map((p) => p.length),
    [2, 2, 1],
  );

  const human = await runCli(['admin', 'pools', 'timeline', 'default'], cli.env);
  assert.match(human.stdout, /^pool default: 1 devices on 1 nodes; holds from \S+ to \S+, \d+ handoffs/);
  assert.match(human.stdout, /timeline-node .* now-0 /);

  for (const args of [['pools'], ['pools', 'list']]) {
    const list = await runCli(['admin', ...args], cli.env);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /default .* 1 /);
  }
});
