// Worker thread for lock.bench.ts: the waiting side of a handoff, in its own event loop (as a
// separate process would be), so its wake-up is not queued behind the holder's reply handling.
// Times are process.hrtime (one monotonic clock for all threads of the process).
import { parentPort, workerData } from 'node:worker_threads';
import { Redis } from 'ioredis';
import { DeviceLockService } from '../device-lock-service.js';

interface Init {
  url: string;
  prefix: string;
  devices: string[];
}

const port = parentPort;
if (!port) throw new Error('handoff-waiter must run as a worker thread');
const { url, prefix, devices } = workerData as Init;
const redis = new Redis(url, { connectionName: 'ts-lock-bench-w' });
const locks = new DeviceLockService(redis, { prefix });
const req = { devices, job: 'bench', stage: 'switch', holder: 'worker' };

port.on('message', (msg: { type: 'queue' | 'stop' }) => {
  if (msg.type === 'stop') {
    locks.close();
    void redis.quit().then(() => port.postMessage({ type: 'done' }));
    return;
  }
  void (async () => {
    let queued!: () => void;
    const isQueued = new Promise<void>((r) => (queued = r));
    const granted = locks.acquire({ ...req, onQueued: () => queued() }).then((g) => {
      const at = process.hrtime.bigint();
      return { g, at };
    });
    await isQueued;
    await redis.ping(); // the BLPOP, written before this PING, is registered once it returns
    port.postMessage({ type: 'queued' });
    const { g, at } = await granted;
    await locks.release(g);
    port.postMessage({ type: 'got', at });
  })();
});
port.postMessage({ type: 'ready' });
