/**
 * Entry point of the worker image: `node dist/worker-node/enroll.js [daemon flags]`. Starts the
 * daemon (main.ts) with TIMESHARE_NODE_KEY when it is set; otherwise first asks the API for a node
 * key with TIMESHARE_ADMIN_KEY (POST /v1/node-keys), waiting for the API to come up. That lets a
 * compose stack or a DaemonSet run workers without an operator minting keys by hand; where the admin
 * key must stay off the GPU machines, mint one node key and set TIMESHARE_NODE_KEY instead.
 */
import { configOrExit } from '../common/config.js';
import { loadWorkerConfig } from './config.js';

// The daemon's configuration is checked before enrolling: a bad variable is refused at once, not
// after a node key was minted for a daemon that will not start (the key is checked by main.ts).
const config = configOrExit('worker-node', () =>
  loadWorkerConfig(process.argv.slice(2), {
    ...process.env,
    TIMESHARE_NODE_KEY: process.env.TIMESHARE_NODE_KEY || 'tsn_not_enrolled_yet',
  }),
);
const api = config.TIMESHARE_API_URL;
const adminKey = process.env.TIMESHARE_ADMIN_KEY;

async function nodeKey(): Promise<string> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      const res = await fetch(`${api}/v1/node-keys`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' },
        // A key's name is at most 64 characters (a node's, 128).
        body: JSON.stringify({ name: config.TIMESHARE_NODE_NAME.slice(0, 64) }),
      });
      if (res.status === 201) return ((await res.json()) as { apiKey: string }).apiKey;
      // A refused admin key will not start working: say so instead of waiting.
      if (res.status === 401 || res.status === 403)
        throw new Error(`the API refused the admin key (${res.status})`);
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('the API refused')) throw err;
    }
    if (Date.now() > deadline) throw new Error(`no node key from ${api} within 120 s`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

if (!process.env.TIMESHARE_NODE_KEY) {
  if (!adminKey) {
    console.error('set TIMESHARE_NODE_KEY (a node key), or TIMESHARE_ADMIN_KEY to enroll this node');
    process.exit(1);
  }
  process.env.TIMESHARE_NODE_KEY = await nodeKey();
  // The job processes this daemon forks get the environment, but never need the admin key.
  delete process.env.TIMESHARE_ADMIN_KEY;
}
await import('./main.js');
