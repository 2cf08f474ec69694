/**
 * `npm start`: the whole system on one machine — API, two schedulers (leader + standby), webhook
 * dispatcher and one worker-node daemon — against PostgreSQL and Redis found or started by
 * services.ts. Prints the URL, a session admin key and where each process serves its metrics.
 * Each process is a real child process with its own entry point, as in production.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { apiNodeFlags } from '../../api/node-flags.js';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyMigrations } from '../../prisma/tools/schema-engine.js';
import { CONFIG_EXIT_CODE, configOrExit } from '../../common/config.js';
import {
  childEnvironments,
  metricsHostOf,
  metricsPorts,
  metricsPortsProblem,
  metricsUrls,
} from './children.js';
import { loadLauncherConfig } from './config.js';
import { findPostgres, findRedis, type Service } from './services.js';
import { claimDataDir } from './data-lock.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const log = (m: string) => console.log(`[start] ${m}`);
const services: Service[] = [];
const config = configOrExit('start', () => loadLauncherConfig());
const dataDir = path.resolve(config.TIMESHARE_DATA_DIR ?? path.join(root, '.data'));
let releaseDataDir = () => {};

/** One supervised child: started again when it dies while the launcher is not stopping. */
interface Supervised {
  name: string;
  spawn: () => ChildProcess;
  child: ChildProcess;
  restarts: number;
}
const children: Supervised[] = [];
const watchParent = path.join(root, 'infra/local/parent-watch.ts');

/** Restart delays double from 1 s up to 30 s; a child that ran a minute starts over at 1 s. */
const RESTART_FIRST_MS = config.TIMESHARE_RESTART_BACKOFF_MS;
const RESTART_MAX_MS = 30_000;
const HEALTHY_AFTER_MS = 60_000;

function run(
  name: string,
  entry: string,
  env: NodeJS.ProcessEnv,
  args: string[] = [],
  nodeFlags: string[] = [],
): Supervised {
  const spawnChild = () => {
    // Each child in its own process group: Ctrl-C in the terminal signals only this process, which
    // then stops the children in order (stop below) instead of all at once. The parent watch stops
    // a child whose launcher died without stopping it.
    const child = spawn(
      process.execPath,
      [...nodeFlags, '--import', 'tsx', '--import', watchParent, path.join(root, entry), ...args],
      { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    pipeOutput(name, child);
    log(`${name} started (pid ${child.pid})`);
    return child;
  };
  const s: Supervised = { name, spawn: spawnChild, child: spawnChild(), restarts: 0 };
  supervise(s);
  children.push(s);
  return s;
}

function supervise(s: Supervised): void {
  const startedAt = Date.now();
  s.child.once('exit', (code, signal) => {
    if (stopping) return;
    if (code === CONFIG_EXIT_CODE) {
      // Started again it would only refuse again. Stopped once its output is through (its last
      // lines say what it refused), not at its exit.
      s.child.once('close', () => {
        log(`${s.name} refused its configuration; stopping`);
        void stop(1);
      });
      return;
    }
    if (Date.now() - startedAt > HEALTHY_AFTER_MS) s.restarts = 0;
    const delay = Math.min(RESTART_MAX_MS, RESTART_FIRST_MS * 2 ** s.restarts);
    s.restarts++;
    log(`${s.name} exited (${signal ?? code}); restarting it in ${delay} ms`);
    setTimeout(() => {
      if (stopping) return;
      s.child = s.spawn();
      supervise(s);
    }, delay);
  });
}

function pipeOutput(name: string, child: ChildProcess): void {
  const prefix = `[${name}] `;
  for (const stream of [child.stdout!, child.stderr!]) {
    let buf = '';
    stream.on('data', (d: Buffer) => {
      buf += d.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        process.stdout.write(prefix + readable(buf.slice(0, i)) + '\n');
        buf = buf.slice(i + 1);
      }
    });
  }
}

const levels: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** One pino JSON line as `12:00:01 INFO message key=value …`, for people watching npm start. */
function readable(line: string): string {
  if (!line.startsWith('{')) return line;
  try {
    const { level, time, msg, proc: _p, name: _n, pid: _pid, hostname: _h, ...rest } = JSON.parse(line);
    const when = new Date(time).toISOString().slice(11, 19);
    const extra = Object.entries(rest)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ');
    return `${when} ${levels[level] ?? level} ${msg ?? ''}${extra ? ` ${extra}` : ''}`;
  } catch {
    return line;
  }
}

/** A child's shutdown grace: the worker's own drain timeout (its jobs checkpoint first) and some. */
const STOP_GRACE_MS = config.TIMESHARE_DRAIN_TIMEOUT_MS + 15_000;

/** SIGTERM, then SIGKILL if the child is still there after the grace period. */
async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

let stopping = false;
async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  // In reverse order of start: the worker drains first (its jobs checkpoint and are handed back
  // through the API), then the scheduler, then the API. Stopped together, the worker's hand-backs
  // found the API gone and it hung retrying them.
  for (const s of [...children].reverse()) await terminate(s.child);
  for (const s of services) await s.stop();
  releaseDataDir();
  log(code === 0 ? 'stopped' : `stopped (exit ${code})`);
  process.exit(code);
}

/**
 * Refuses to start beside a system that already holds the port (another `npm start`, say): its API
 * would have answered this launcher's readiness probe, and this launcher, taking it for its own,
 * released the running worker's node and started a second set of services against it.
 */
async function portFree(host: string, port: number): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => resolve(err));
    probe.listen(port, host, () => probe.close(() => resolve(null)));
  });
}

/** Ready is this launcher's own API answering: one that exited first did not (its output says why). */
async function waitForApi(url: string, api: Supervised): Promise<void> {
  const first = api.child;
  for (let i = 0; i < 300; i++) {
    if (api.child !== first || first.exitCode !== null || first.signalCode !== null)
      throw new Error('the API exited before it was ready (its output above says why)');
    try {
      if ((await fetch(`${url}/readyz`)).ok) return;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the API did not become ready within 30 s');
}

/** The node key of this machine's local worker; earlier sessions' keys of that name are revoked. */
const localKeyName = (nodeName: string) => `local-worker ${nodeName}`.slice(0, 64);

/**
 * A fresh node key for this session's worker. A node stays bound to the key that registered it, so
 * the node this machine registered in an earlier session (under that session's key) is released
 * first, as an admin would release a machine whose key was replaced, and that key is revoked: each
 * session left one more live key behind. (`local-worker` was the name before keys named their node.)
 */
async function localNodeKey(url: string, adminKey: string, nodeName: string): Promise<string> {
  const admin = { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' };
  const call = async <T>(route: string, method = 'GET', body?: unknown): Promise<T> => {
    const res = await fetch(`${url}${route}`, {
      method,
      headers: admin,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${route} → ${res.status} ${await res.text()}`);
    return (res.status === 204 ? undefined : await res.json()) as T;
  };
  /** Every item of an admin list, page by page. */
  const all = async <T>(route: string): Promise<T[]> => {
    const items: T[] = [];
    let after: string | null = null;
    do {
      const page: { data: T[]; nextCursor: string | null } = await call(
        `${route}?limit=100${after ? `&after=${encodeURIComponent(after)}` : ''}`,
      );
      items.push(...page.data);
      after = page.nextCursor;
    } while (after);
    return items;
  };
  const earlier = (await all<{ id: string; name: string }>('/v1/nodes')).find((n) => n.name === nodeName);
  if (earlier) await call(`/v1/nodes/${earlier.id}/release`, 'POST', {});
  for (const k of await all<{ id: string; name: string; revokedAt: string | null }>('/v1/node-keys'))
    if (!k.revokedAt && (k.name === localKeyName(nodeName) || k.name === 'local-worker'))
      await call(`/v1/node-keys/${k.id}`, 'DELETE');
  return (await call<{ apiKey: string }>('/v1/node-keys', 'POST', { name: localKeyName(nodeName) })).apiKey;
}

async function main(): Promise<void> {
  const inUse = await portFree(config.HOST, config.PORT);
  if (inUse) {
    log(
      inUse.code === 'EADDRINUSE'
        ? `${config.HOST}:${config.PORT} is in use: is Timeshare already running (another npm start)? Stop it, or set PORT`
        : `cannot listen on ${config.HOST}:${config.PORT}: ${inUse.message}`,
    );
    process.exit(1);
  }
  const metricsProblem = metricsPortsProblem(config);
  if (metricsProblem) {
    log(`${metricsProblem}: set TIMESHARE_METRICS_PORT to another port, or PORT`);
    process.exit(1);
  }
  for (const [name, p] of Object.entries(metricsPorts(config) ?? {})) {
    const err = await portFree(metricsHostOf(config), p);
    if (err) {
      log(
        `cannot serve ${name}'s metrics on ${metricsHostOf(config)}:${p} (TIMESHARE_METRICS_PORT=${config.TIMESHARE_METRICS_PORT} ` +
          `and the next two): ${err.code === 'EADDRINUSE' ? 'in use' : err.message}; set TIMESHARE_METRICS_PORT to another port`,
      );
      process.exit(1);
    }
  }
  // Claimed after the port checks, so a second launcher on the same port says that first. The folder
  // goes again on a clean stop if nothing but the lock was written there (configured services).
  try {
    releaseDataDir = claimDataDir(dataDir);
  } catch (err) {
    log(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
  const postgres = await findPostgres(dataDir, log);
  services.push(postgres);
  const redis = await findRedis(dataDir, log);
  services.push(redis);
  log(`PostgreSQL (${postgres.source}): ${postgres.url}`);
  log(`Redis (${redis.source}): ${redis.url}`);
  const applied = await applyMigrations(postgres.url);
  log(applied.length ? `migrations applied: ${applied.join(', ')}` : 'database schema is up to date');

  const port = String(config.PORT);
  const host = config.HOST;
  const url = `http://${host}:${port}`;
  const shared: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: postgres.url,
    REDIS_URL: redis.url,
    PORT: port,
    HOST: host,
    TIMESHARE_ADMIN_KEY: process.env.TIMESHARE_ADMIN_KEY ?? `tsa_${randomBytes(24).toString('base64url')}`,
    TIMESHARE_JWT_SECRET: process.env.TIMESHARE_JWT_SECRET ?? randomBytes(32).toString('hex'),
    TIMESHARE_STORAGE_ROOT: process.env.TIMESHARE_STORAGE_ROOT ?? path.join(dataDir, 'checkpoints'),
    TIMESHARE_OUTBOX_DIR: process.env.TIMESHARE_OUTBOX_DIR ?? path.join(dataDir, 'outbox'),
  };
  // The same environment for all, but a metrics port of its own for each scheduler and the worker.
  const env = childEnvironments(shared, config);

  const api = run('api', 'api/main.ts', env.api, [], apiNodeFlags);
  await waitForApi(url, api);
  const nodeName = config.TIMESHARE_NODE_NAME ?? os.hostname();
  const nodeKey = await localNodeKey(url, shared.TIMESHARE_ADMIN_KEY!, nodeName);
  // Two schedulers: one leads (rounds under a lease), the other stands by and takes over within
  // TIMESHARE_LEADER_LEASE_MS if the leader dies.
  run('scheduler-a', 'scheduler/main.ts', env['scheduler-a']);
  run('scheduler-b', 'scheduler/main.ts', env['scheduler-b']);
  run('webhooks', 'webhooks/main.ts', env.webhooks);
  run(
    'worker',
    'worker-node/main.ts',
    { ...env.worker, TIMESHARE_API_URL: url, TIMESHARE_NODE_KEY: nodeKey, TIMESHARE_NODE_NAME: nodeName },
    ['--virtual-devices', String(config.TIMESHARE_VIRTUAL_DEVICES)],
  );

  console.log(
    [
      '',
      `  Timeshare is running at ${url}`,
      `  Admin key for this session: ${shared.TIMESHARE_ADMIN_KEY}`,
      `  Dashboard: ${url}/ui/ (log in with the admin key, or a tenant's API key)`,
      `  Prometheus metrics: ${metricsUrls(config)
        .map((m) => `${m.name} ${m.url}`)
        .join(', ')}`,
      ...(metricsPorts(config)
        ? []
        : ["    (the schedulers' and the worker's: set TIMESHARE_METRICS_PORT=P for P, P+1 and P+2)"]),
      '',
      `  export TS=${url} ADMIN=${shared.TIMESHARE_ADMIN_KEY}`,
      `  export TIMESHARE_API_URL=${url} TIMESHARE_ADMIN_KEY=${shared.TIMESHARE_ADMIN_KEY}`,
      '  node cli/bin.mjs admin tenants create acme     # then: login, submit, logs -f …',
      '  (the README walks through the rest; Ctrl-C stops everything)',
      '',
    ].join('\n'),
  );
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(0));
main().catch(async (err) => {
  console.error(`[start] ${err instanceof Error ? err.message : String(err)}`);
  await stop(1);
});
