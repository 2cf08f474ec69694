/**
 * Each test file gets its own PostgreSQL database, cloned from a template that holds the committed
 * migrations (cloning takes ~100 ms; migrating takes ~1 s). The template's name carries a hash of
 * the migrations, so a changed migration gets a fresh template; it is built under a temporary name
 * and renamed, so a run killed mid-build never leaves a half-migrated template behind.
 */
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { applyMigrations, readMigrations } from '../../prisma/tools/schema-engine.js';

export const adminUrl = () =>
  process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

function urlFor(database: string): string {
  const u = new URL(adminUrl());
  u.pathname = `/${database}`;
  return u.toString();
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: adminUrl() });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

function templateName(): string {
  const h = createHash('sha256');
  for (const d of readMigrations().migrationDirectories)
    h.update(d.path).update(d.migrationFile.content.value);
  return `timeshare_tmpl_${h.digest('hex').slice(0, 16)}`;
}

/**
 * Building a template, cloning from it and dropping templates take this lock, across every test
 * process and run on the server: a run that ended dropped a template another session was building
 * (`database "timeshare_tmpl_…_build_…" does not exist` at its rename) or about to clone.
 */
export const TEMPLATE_LOCK = 7419001;

async function withTemplateLock<T>(c: pg.Client, fn: () => Promise<T>): Promise<T> {
  await c.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
  try {
    return await fn();
  } finally {
    await c.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
  }
}

/** A database cloned from the migrated template, which is built first if missing. */
async function cloneTemplate(name: string): Promise<void> {
  const template = templateName();
  await admin((c) =>
    withTemplateLock(c, async () => {
      const exists = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
      if (!exists.rows.length) {
        const building = `${template}_build_${randomBytes(4).toString('hex')}`;
        await c.query(`CREATE DATABASE "${building}"`);
        await applyMigrations(urlFor(building));
        await c.query(`ALTER DATABASE "${building}" RENAME TO "${template}"`);
      }
      await c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
    }),
  );
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `timeshare_test_${randomBytes(6).toString('hex')}`;
  await cloneTemplate(name);
  return {
    url: urlFor(name),
    name,
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
  };
}

/**
 * Drops the migrated templates once no test database is left to clone from them: what a benchmark
 * calls when it is done with its databases. (The test runner, `scripts/run-tests.mjs`, plain
 * JavaScript that cannot import this file, keeps the same rule for a test run.)
 */
export async function dropIdleTemplates(): Promise<void> {
  await admin((c) =>
    withTemplateLock(c, async () => {
      const busy = await c.query(
        `SELECT 1 FROM pg_database WHERE datname LIKE 'timeshare\\_test\\_%' LIMIT 1`,
      );
      if (busy.rows.length) return;
      const templates = await c.query(
        `SELECT datname FROM pg_database WHERE datname LIKE 'timeshare\\_tmpl\\_%'`,
      );
      for (const { datname } of templates.rows as { datname: string }[])
        await c.query(`DROP DATABASE IF EXISTS "${datname}"`);
    }),
  );
}
