/**
 * Finds or starts the PostgreSQL and Redis that `npm start` runs against, in this order:
 * the configured URL; the machine's own service on its standard port; a private server started from
 * binaries on PATH (or Debian's /usr/lib/postgresql/<v>/bin) with its data under `.data/`. If none
 * works, the error says what to install.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';

export interface Service {
  url: string;
  source: 'configured' | 'local' | 'private';
  stop(): Promise<void>;
}

const noop = async () => {};

async function canQuery(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1500 });
  try {
    await c.connect();
    await c.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

async function canPing(url: string): Promise<boolean> {
  const r = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1500,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

function which(bin: string, extraDirs: string[] = []): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(':'), ...extraDirs]) {
    const full = path.join(dir, bin);
    if (dir && existsSync(full)) return full;
  }
  return null;
}

function postgresBinDirs(): string[] {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return [];
  return readdirSync(base)
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => path.join(base, v, 'bin'));
}

async function waitUntil(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

async function ensureDatabase(serverUrl: string, name: string): Promise<string> {
  const admin = new URL(serverUrl);
  admin.pathname = '/postgres';
  const c = new pg.Client({ connectionString: admin.toString() });
  await c.connect();
  try {
    const exists = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!exists.rows.length) await c.query(`CREATE DATABASE "${name}"`);
  } finally {
    await c.end();
  }
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function findPostgres(dataDir: string, log: (m: string) => void): Promise<Service> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, source: 'configured', stop: noop };
  const local = 'postgresql://postgres@127.0.0.1:5432/postgres';
  if (await canQuery(local)) {
    return { url: await ensureDatabase(local, 'timeshare'), source: 'local', stop: noop };
  }
  const dirs = postgresBinDirs();
  const initdb = which('initdb', dirs);
  const pgCtl = which('pg_ctl', dirs);
  if (!initdb || !pgCtl) {
    throw new Error(
      'No PostgreSQL found: set DATABASE_URL, run one on 127.0.0.1:5432 (user postgres, trust auth), ' +
        'or install the binaries (Debian: apt-get install postgresql) so a private one can start under .data/.',
    );
  }
  const dir = path.join(dataDir, 'postgres');
  const port = 54329;
  if (!existsSync(path.join(dir, 'PG_VERSION'))) {
    mkdirSync(dir, { recursive: true });
    log(`initialising a private PostgreSQL in ${dir}`);
    const r = spawnSync(initdb, ['-D', dir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8'], {
      stdio: 'inherit',
    });
    if (r.status !== 0) throw new Error('initdb failed');
  }
  const r = spawnSync(
    pgCtl,
    [
      '-D',
      dir,
      '-l',
      path.join(dataDir, 'postgres.log'),
      '-o',
      `-p ${port} -k ${path.resolve(dataDir)} -c listen_addresses=127.0.0.1`,
      '-w',
      'start',
    ],
    { stdio: 'inherit' },
  );
  if (r.status !== 0) throw new Error(`pg_ctl start failed; see ${path.join(dataDir, 'postgres.log')}`);
  const server = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  return {
    url: await ensureDatabase(server, 'timeshare'),
    source: 'private',
    stop: async () => {
      spawnSync(pgCtl, ['-D', dir, '-m', 'fast', 'stop'], { stdio: 'ignore' });
    },
  };
}

export async function findRedis(dataDir: string, log: (m: string) => void): Promise<Service> {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, source: 'configured', stop: noop };
  const local = 'redis://127.0.0.1:6379';
  if (await canPing(local)) return { url: local, source: 'local', stop: noop };
  const bin = which('redis-server');
  if (!bin) {
    throw new Error(
      'No Redis found: set REDIS_URL, run one on 127.0.0.1:6379, or install redis-server ' +
        '(Debian: apt-get install redis-server) so a private one can start under .data/.',
    );
  }
  const dir = path.join(dataDir, 'redis');
  mkdirSync(dir, { recursive: true });
  const port = 63799;
  log(`starting a private Redis on port ${port}`);
  const child: ChildProcess = spawn(
    bin,
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  const url = `redis://127.0.0.1:${port}`;
  if (!(await waitUntil(() => canPing(url), 10_000))) throw new Error('private redis-server did not start');
  return {
    url,
    source: 'private',
    stop: async () => {
      child.kill('SIGTERM');
    },
  };
}
