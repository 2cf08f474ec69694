/**
 * Prisma's schema engine, run offline from its WASM build (DESIGN.md §5). The CLI's `migrate`
 * commands need a native engine that cannot be downloaded here, so this module drives the same
 * engine the CLI would, through the `pg` driver adapter. It writes Prisma's own `_prisma_migrations`
 * rows, so an online `prisma migrate deploy` agrees with it.
 *
 * Two fixes over the stock adapter, both required for migrations to be atomic:
 * - a pool of ONE connection, so the engine's advisory lock and the DDL share a session;
 * - `executeScript` sends a migration as one query (one implicit transaction) instead of splitting
 *   it on every `;` (which breaks strings and `$$` bodies and runs the pieces in autocommit).
 */
import { readFileSync, readdirSync, existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';

const require = createRequire(import.meta.url);

export const prismaDir = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
export const migrationsDir = path.join(prismaDir, 'migrations');
export const schemaPath = path.join(prismaDir, 'schema.prisma');

interface MigrationList {
  baseDir: string;
  lockfile: { path: string; content: string | null };
  shadowDbInitScript: string;
  migrationDirectories: {
    path: string;
    migrationFile: { path: string; content: { tag: 'ok'; value: string } };
  }[];
}

interface SchemaEngineApi {
  applyMigrations(input: unknown): Promise<{ appliedMigrationNames: string[] }>;
  diagnoseMigrationHistory(input: unknown): Promise<{
    failedMigrationNames: string[];
    editedMigrationNames: string[];
    hasMigrationsTable: boolean;
    history: unknown;
  }>;
  diff(input: unknown): Promise<{ exitCode: number; stdout: string | null }>;
  free(): void;
}

interface WasmApi {
  instantiate(
    bytes: Uint8Array,
    imports: object,
  ): Promise<{ instance: { exports: Record<string, unknown> } }>;
}

const filters = { externalTables: [], externalEnums: [] };

async function loadEngineModule(): Promise<{
  SchemaEngine: {
    new: (opts: unknown, log: (msg: string) => void, adapter: unknown) => Promise<SchemaEngineApi>;
  };
}> {
  const bgPath = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
  const bg = await import(bgPath);
  const wasmBytes = readFileSync(path.join(path.dirname(bgPath), 'schema_engine_bg.wasm'));
  // `WebAssembly` is a Node global that the ES lib typings leave out.
  const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  const { instance } = await wasmApi.instantiate(wasmBytes, { './schema_engine_bg.js': bg });
  bg.__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();
  return bg;
}

/** A pg-adapter factory whose connections run migration scripts as single statements. */
function singleSessionFactory(connectionString: string): { factory: PrismaPg; disposeAll(): Promise<void> } {
  // Discrete fields, not a connection string, so the shadow database can override `database`.
  const url = new URL(connectionString);
  const config: pg.PoolConfig = {
    host: url.hostname,
    port: Number(url.port || 5432),
    user: decodeURIComponent(url.username) || undefined,
    password: decodeURIComponent(url.password) || undefined,
    database: decodeURIComponent(url.pathname.slice(1)),
    max: 1,
  };
  const factory = new PrismaPg(config);
  // The engine never disposes what it connects; without this the pools keep sessions open (which
  // blocks renaming or dropping the database) and the process alive.
  const open = new Set<{ dispose(): Promise<void> }>();
  const track = <T extends { dispose(): Promise<void> }>(a: T): T => {
    open.add(a);
    return a;
  };
  const connect = factory.connect.bind(factory);
  factory.connect = async () => track(oneQueryScripts(await connect()));
  // The stock shadow database is dropped while its own pool still holds a connection, which fails;
  // this one closes the pool first.
  factory.connectToShadowDb = async () => {
    const name = `timeshare_shadow_${randomUUID().replace(/-/g, '')}`;
    await adminQuery(config, `CREATE DATABASE "${name}"`);
    const adapter = oneQueryScripts(await new PrismaPg({ ...config, database: name }).connect());
    const dispose = adapter.dispose.bind(adapter);
    adapter.dispose = async () => {
      open.delete(adapter);
      await dispose();
      await adminQuery(config, `DROP DATABASE IF EXISTS "${name}"`);
    };
    return track(adapter);
  };
  return {
    factory,
    async disposeAll() {
      for (const a of [...open]) await a.dispose().catch(() => undefined);
      open.clear();
    },
  };
}

function oneQueryScripts<T extends { executeScript(s: string): Promise<void>; underlyingDriver(): unknown }>(
  a: T,
): T {
  a.executeScript = async (script: string) => {
    await (a.underlyingDriver() as pg.Pool).query(script);
  };
  return a;
}

async function adminQuery(config: pg.PoolConfig, sql: string): Promise<void> {
  const client = new pg.Client({ ...config, database: 'postgres' });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export function readMigrations(dir = migrationsDir): MigrationList {
  const lockPath = path.join(dir, 'migration_lock.toml');
  const dirs = existsSync(dir)
    ? readdirSync(dir)
        .filter((d) => statSync(path.join(dir, d)).isDirectory())
        .sort()
    : [];
  return {
    baseDir: dir,
    lockfile: { path: lockPath, content: existsSync(lockPath) ? readFileSync(lockPath, 'utf8') : null },
    shadowDbInitScript: '',
    migrationDirectories: dirs.map((d) => {
      const file = path.join(dir, d, 'migration.sql');
      return {
        path: d,
        migrationFile: { path: file, content: { tag: 'ok', value: readFileSync(file, 'utf8') } },
      };
    }),
  };
}

export async function withSchemaEngine<T>(
  connectionString: string,
  fn: (engine: SchemaEngineApi) => Promise<T>,
): Promise<T> {
  const mod = await loadEngineModule();
  const { factory, disposeAll } = singleSessionFactory(connectionString);
  const adapter = bindMigrationAwareSqlAdapterFactory(factory);
  const logs: string[] = [];
  const engine = await mod.SchemaEngine.new({ datamodels: undefined }, (m: string) => logs.push(m), adapter);
  try {
    return await fn(engine);
  } catch (err) {
    if (process.env.TIMESHARE_MIGRATE_DEBUG) console.error(logs.join('\n'));
    throw err;
  } finally {
    engine.free();
    await disposeAll();
  }
}

/** = `prisma migrate deploy`. Returns the names of the migrations it applied. */
export async function applyMigrations(connectionString: string): Promise<string[]> {
  return withSchemaEngine(connectionString, async (engine) => {
    const out = await engine.applyMigrations({ migrationsList: readMigrations(), filters });
    return out.appliedMigrationNames;
  });
}

/** = `prisma migrate status`. */
export async function migrationStatus(connectionString: string) {
  return withSchemaEngine(connectionString, (engine) =>
    engine.diagnoseMigrationHistory({
      migrationsList: readMigrations(),
      optInToShadowDatabase: false,
      filters,
    }),
  );
}

/**
 * SQL that takes the schema of the last migration to `schema.prisma` ('' if none). Each migration
 * folder keeps the schema it was made from (`schema.snapshot.prisma`), so this is a pure datamodel
 * diff: describing a live or shadow database through the adapter fails on Postgres's `"char"` type.
 */
export async function diffMigrationsToSchema(connectionString: string): Promise<string> {
  return withSchemaEngine(connectionString, async (engine) => {
    const dirs = readMigrations().migrationDirectories;
    const last = dirs[dirs.length - 1];
    const snapshot = last ? path.join(migrationsDir, last.path, snapshotName) : null;
    if (snapshot && !existsSync(snapshot)) throw new Error(`${snapshot} is missing`);
    const from = snapshot
      ? { tag: 'schemaDatamodel', files: [{ path: snapshot, content: readFileSync(snapshot, 'utf8') }] }
      : { tag: 'empty' };
    const to = {
      tag: 'schemaDatamodel',
      files: [{ path: schemaPath, content: readFileSync(schemaPath, 'utf8') }],
    };
    const out = await engine.diff({ from, to, script: true, exitCode: null, filters });
    return out.stdout ?? '';
  });
}

export const snapshotName = 'schema.snapshot.prisma';
