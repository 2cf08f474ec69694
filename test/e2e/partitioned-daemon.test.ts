/**
 * A daemon loses the API (a network partition: the API is up, Redis and the checkpoint store are
 * still reachable from the node) for longer than the node timeout. Its heartbeats fail, the
 * scheduler gives its job to another node, and the daemon itself is alive and well. Its job process
 * must be gone by then, or the job runs twice and both runs write the same checkpoint directories.
 * When the partition heals the job still finishes once, and every committed checkpoint matches its
 * file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startCluster, steadyJob, waitFor, waitForStatus, type Cluster } from '../helpers/cluster.js';
import { startProcess, type Proc } from '../helpers/processes.js';
import { childrenIdle, finishedOnce, runningOn } from '../helpers/run-once.js';

/** A TCP relay to the API that can be cut (every connection dropped, new ones refused) and healed. */
function relay(target: URL): {
  url: Promise<string>;
  cut(): Promise<void>;
  heal(): Promise<void>;
  close(): Promise<void>;
} {
  const sockets = new Set<Socket>();
  let port = 0;
  let server: Server;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(Number(target.port), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as { port: number }).port;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return { url: listen().then(() => `http://127.0.0.1:${port}`), cut: stop, heal: listen, close: stop };
}

let c: Cluster;
let link: ReturnType<typeof relay>;
let cutOff: Proc | undefined;
const outbox = mkdtempSync(path.join(os.tmpdir(), 'timeshare-outbox-partition-'));
before(async () => {
  c = await startCluster({ nodeTimeoutMs: 2000 });
  link = relay(new URL(c.h.api.url));
});
after(async () => {
  await cutOff?.kill('SIGKILL');
  await link.close().catch(() => undefined);
  await c.close();
  rmSync(outbox, { recursive: true, force: true });
});

test(
  'a daemon cut off from the API: its job process stops before the job runs elsewhere, and the job finishes once',
  { timeout: 400_000 },
  async () => {
    const key = (await c.h.admin(c.h.http.post('/v1/node-keys')).send({ name: 'cut-off' }).expect(201)).body;
    cutOff = startProcess(
      'worker-node/main.ts',
      {
        ...c.env,
        TIMESHARE_API_URL: await link.url,
        TIMESHARE_NODE_KEY: key.apiKey,
        TIMESHARE_NODE_NAME: 'cut-off',
        TIMESHARE_OUTBOX_DIR: outbox,
      },
      [],
      ['--virtual-devices', '1', '--device-memory', String(256 * 1024 * 1024), '--threads-per-device', '1'],
    );
    await waitFor(
      'cut-off registered',
      async () =>
        (await c.sql.query(`SELECT 1 FROM nodes WHERE name = 'cut-off' AND status = 'ready'`)).rows.length >
        0,
    );
    const t = await c.h.createTenant('partitioned');
    const id = (await t.as(c.h.http.post('/v1/jobs')).send(steadyJob('partitioned', 80)).expect(201)).body
      .id as string;
    await waitForStatus(c, t, id, ['running']);
    await waitFor(
      'a first checkpoint',
      async () => (await c.sql.query('SELECT 1 FROM checkpoints WHERE job_id = $1', [id])).rows.length > 0,
    );
    await c.startWorker('rescuer', 1);
    await link.cut();
    try {
      await runningOn(c, id, 'rescuer');
      await childrenIdle(cutOff.child.pid!, 'cut-off');
    } finally {
      await link.heal();
    }
    await finishedOnce(c, t, id);
  },
);
