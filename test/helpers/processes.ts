/** Real child processes for crash and end-to-end tests: start an entry point, wait until it answers, kill it. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

export function startProcess(
  entry: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
  args: string[] = [],
): Proc {
  const child = spawn(
    process.execPath,
    [...nodeArgs, '--import', 'tsx', path.join(repoRoot, entry), ...args],
    {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(signal ? null : code)),
  );
  return {
    child,
    output: () => out,
    exited,
    async kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

export async function waitForHttp(url: string, proc: Proc, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null) throw new Error(`process exited early:\n${proc.output()}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${url}:\n${proc.output()}`);
}

/** CPU time (clock ticks) each child of `pid` has used so far: what shows whether it still works. */
export function childCpuTicks(pid: number): Map<number, number> {
  const ticks = new Map<number, number>();
  for (const line of execFileSync('ps', ['-o', 'pid=,ppid=', '-e']).toString().trim().split('\n')) {
    const [child, parent] = line.trim().split(/\s+/).map(Number);
    if (parent !== pid) continue;
    try {
      const fields = readFileSync(`/proc/${child}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks.set(child!, Number(fields[11]) + Number(fields[12])); // utime + stime
    } catch {
      // exited meanwhile
    }
  }
  return ticks;
}
