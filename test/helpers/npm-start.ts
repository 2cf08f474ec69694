/**
 * `npm start` as a user runs it (infra/local/start.ts: API, scheduler, webhook dispatcher and a
 * worker), in its own process group like a terminal's foreground job, with the caller's database,
 * Redis prefix, storage and port. Resolves once it printed the URL and the admin key.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { waitFor } from './cluster.js';
import { repoRoot } from './processes.js';

export interface Launched {
  url: string;
  output: () => string;
  /** Ctrl-C in the terminal: SIGINT to the launcher's whole process group. Resolves to its exit code. */
  interrupt: () => Promise<number | null>;
}

export async function launchLocal(env: Record<string, string>): Promise<Launched> {
  // The worker's outbox and the launcher's data folder go with the caller's storage: under the
  // repository's .data/ they outlived the test (an empty .data/outbox/ left in the checkout), and a
  // developer's own `npm start` there would refuse the test's launcher (infra/local/data-lock.ts).
  const outbox = env.TIMESHARE_STORAGE_ROOT
    ? {
        TIMESHARE_OUTBOX_DIR: path.join(env.TIMESHARE_STORAGE_ROOT, '.outbox'),
        TIMESHARE_DATA_DIR: path.join(env.TIMESHARE_STORAGE_ROOT, '.data'),
      }
    : {};
  const launcher = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'infra/local/start.ts')], {
    cwd: repoRoot,
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', ...outbox, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  launcher.stdout!.on('data', (d) => (out += d));
  launcher.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => launcher.on('exit', (code) => r(code)));
  const interrupt = () => {
    if (launcher.exitCode === null) process.kill(-launcher.pid!, 'SIGINT');
    return exited;
  };
  try {
    const [, url] = await waitFor('the URL and admin key', async () => {
      if (launcher.exitCode !== null) throw new Error(`npm start exited early:\n${out}`);
      return /export TS=(\S+) ADMIN=\S+/.exec(out);
    });
    return { url: url!, output: () => out, interrupt };
  } catch (err) {
    await interrupt();
    throw err;
  }
}
