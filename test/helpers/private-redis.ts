/**
 * A redis-server of a test's own, on a free port under a temporary folder, with no persistence (as
 * the device lock runs in production), for tests that kill Redis and start it again: what a
 * restart leaves (nothing) is what they are about, which the shared Redis cannot show.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './processes.js';

export class PrivateRedis {
  private server: ChildProcess | null = null;

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  /** Started and answering. */
  static async start(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort(), await mkdtemp(path.join(os.tmpdir(), 'private-redis-')));
    await r.restart();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts it (again, empty) on the same port; resolves once it answers PING. */
  async restart(): Promise<void> {
    await this.kill();
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    this.server = spawn('redis-server', [...args, '--dir', this.dir], { stdio: 'ignore' });
    const probe = new Redis(this.port, '127.0.0.1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    probe.on('error', () => undefined);
    try {
      for (const end = Date.now() + 15_000; ; await new Promise((r) => setTimeout(r, 25))) {
        const pong = await probe.connect().then(
          () => probe.ping(),
          () => null,
        );
        if (pong === 'PONG') return;
        if (Date.now() > end) throw new Error(`redis-server on port ${this.port} did not answer in 15 s`);
      }
    } finally {
      probe.disconnect();
    }
  }

  /** SIGKILL: gone at once, its data with it. */
  async kill(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s || s.exitCode !== null) return;
    const gone = new Promise((r) => s.once('exit', r));
    s.kill('SIGKILL');
    await gone;
  }

  async close(): Promise<void> {
    await this.kill();
    await rm(this.dir, { recursive: true, force: true });
  }
}
