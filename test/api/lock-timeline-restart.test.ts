/**
 * A node's device-lock timeline across a Redis restart. A QA pass found it empty after one and
 * asked whether the lock had stopped recording. It had not: Redis keeps nothing on disk here, so the
 * timeline (a stream in Redis) starts again empty, and the holder's take-back after the restart is
 * its first record. The answer now says since when it records (`recordedSince`), so an empty or
 * short timeline reads as what it is. The Redis here is a private redis-server (no persistence, as
 * in production) under a temporary folder, killed and started again on the same port.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { LeaseKeeper } from '../../common/device-lock/index.js';
import { startHarness, type Harness } from '../helpers/api-harness.js';
import { registerTestNode } from '../helpers/test-node.js';
import { PrivateRedis } from '../helpers/private-redis.js';

let redis: PrivateRedis;
let h: Harness;

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

before(async () => {
  redis = await PrivateRedis.start();
  h = await startHarness({ REDIS_URL: redis.url });
});
after(async () => {
  await h.close();
  await redis.close();
});

interface Hold {
  job: string;
  token: number;
  end: string | null;
}

test('after a Redis restart the timeline records again, from a recordedSince after the restart', async () => {
  const node = (await registerTestNode(h, 'restarted-redis')).id;
  const locks = h.api.deps.locks;
  await locks.declareFresh();
  const timeline = async () => (await h.admin(h.http.get(`/v1/nodes/${node}/timeline`)).expect(200)).body;

  const grant = await locks.acquire({
    devices: [`${node}/0`],
    job: 'runs',
    stage: 'train',
    holder: 'h',
    leaseMs: 3000,
  });
  const keeper = new LeaseKeeper(locks, grant, { onLost: () => undefined, onError: () => undefined });
  try {
    const first = await timeline();
    assert.deepEqual(
      (first.data as Hold[]).map((d) => [d.job, d.end]),
      [['runs', null]],
    );
    const firstSince = Date.parse(first.recordedSince as string);
    assert.ok(firstSince <= Date.parse(first.data[0].start), 'the hold is within what is recorded');

    await redis.kill();
    const restartedAt = Date.now();
    await redis.restart();
    await until('the API to reconnect', () => h.api.deps.redis.status === 'ready');
    // Right after the restart Redis knows of no hold: nothing recorded, and the answer says so.
    await until(
      'the holder to take its device back',
      () => keeper.grant.tokens[`${node}/0`] !== grant.tokens[`${node}/0`],
    );

    const back = await timeline();
    assert.deepEqual(
      (back.data as Hold[]).map((d) => [d.job, d.token, d.end]),
      [['runs', keeper.grant.tokens[`${node}/0`], null]],
      'the take-back is recorded: the lock records again after the restart',
    );
    const since = Date.parse(back.recordedSince as string);
    assert.ok(since >= restartedAt - 1000, `recordedSince ${back.recordedSince} is from after the restart`);
  } finally {
    keeper.stop();
    await locks.release(keeper.grant);
  }
  const released = await timeline();
  assert.equal(released.data[0].end === null, false);
});
