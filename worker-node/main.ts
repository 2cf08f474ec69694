/**
 * Entry point of the worker-node daemon: `node dist/worker-node/main.js --virtual-devices 2`.
 *
 * Registers the node's devices, heartbeats, and runs the jobs placed on it — each in its own child
 * process (job-supervisor.ts) that takes the job's devices through the device lock for every stage
 * (stage-loop.ts). It learns about new assignments from a Redis notification or, failing that, a
 * poll; cancel and preempt arrive on the control channel. SIGTERM drains: every job checkpoints
 * and returns to the queue before the daemon exits.
 */
import path from 'node:path';
import { createLogger } from '../common/logger.js';
import { redisNames, type RedisNames } from '../common/queues.js';
import { connectRedis } from '../common/redis.js';
import { DeviceLockService } from '../common/device-lock/index.js';
import type { ControlMessage } from '../common/jobs/notify.js';
import { configOrExit } from '../common/config.js';
import { loadWorkerConfig } from './config.js';
import { ControlPlaneClient, ControlPlaneError, type DeviceReport } from './control-plane-client.js';
import { ReportOutbox } from './report-outbox.js';
import { deliverReports } from './outbox-delivery.js';
import { JobSupervisor } from './job-supervisor.js';
import { HeartbeatLease, heartbeatRetryDelays, supervisionMs } from './supervision.js';
import { storageConfigFromEnv } from '../common/storage/index.js';
import { discoverGpus, virtualDevices } from './devices.js';
import { createWorkerMetrics } from './metrics.js';
import { serveMetrics } from '../common/metrics/serve.js';

const config = configOrExit('worker-node', () => loadWorkerConfig());
const logger = createLogger('worker-node', config.LOG_LEVEL);
const client = new ControlPlaneClient(
  config.TIMESHARE_API_URL,
  config.TIMESHARE_NODE_KEY,
  config.TIMESHARE_API_RETRY_MS,
);
const names: RedisNames = redisNames(config.TIMESHARE_REDIS_PREFIX);

const gpus = config.virtualDevices === null ? discoverGpus() : null;
const devices: DeviceReport[] =
  gpus ?? virtualDevices(config.virtualDevices ?? 2, config.deviceMemory, config.threadsPerDevice);

const outbox = new ReportOutbox({
  dir: path.resolve(config.TIMESHARE_OUTBOX_DIR ?? path.join('.data', 'outbox', config.TIMESHARE_NODE_NAME)),
  ...deliverReports(client),
  onDropped: (r) => metrics.dropped(r.kind),
  logger,
});

const metrics = createWorkerMetrics(config.TIMESHARE_POOL);
metrics.setDevices(devices.length);
metrics.countOutbox(() => outbox.pending);

async function main(): Promise<void> {
  const metricsServer = await serveMetrics(
    metrics.registry,
    config.TIMESHARE_METRICS_PORT,
    config.TIMESHARE_METRICS_HOST,
  );
  // What an earlier daemon could not deliver goes first: registering requeues the node's jobs, and
  // after that their checkpoint records and outcomes would be refused.
  const left = await outbox.open();
  if (left) logger.info({ reports: left }, 'sending reports an earlier run left in the outbox');
  while ((await outbox.idle(60_000)) > 0)
    logger.warn({ reports: outbox.pending }, 'outbox not delivered yet');
  // A registration counts as a heartbeat (the API records it before answering): the lease's start.
  let registeredAt = performance.now();
  const register = () =>
    client.register(
      {
        name: config.TIMESHARE_NODE_NAME,
        pool: config.TIMESHARE_POOL,
        deviceType: gpus ? 'cuda' : 'cpu-virtual',
        devices,
      },
      (err) => logger.warn({ err: err.message }, 'node registration refused for now; retrying'),
      () => (registeredAt = performance.now()),
    );
  const nodeId = await register();
  logger.info({ nodeId, devices: devices.length }, 'node registered');
  const supervision = supervisionMs(config.TIMESHARE_NODE_TIMEOUT_MS, config.TIMESHARE_HEARTBEAT_MS);
  const lease = new HeartbeatLease(supervision, undefined, registeredAt);
  const lockRedis = connectRedis(config.REDIS_URL, { log: logger, name: 'locks' });
  const locks = new DeviceLockService(lockRedis, { prefix: names.lockPrefix });
  const supervisor = new JobSupervisor(outbox, logger, {
    nodeId,
    storage: storageConfigFromEnv(config, path.resolve(config.TIMESHARE_STORAGE_ROOT)),
    redisUrl: config.REDIS_URL,
    lockPrefix: names.lockPrefix,
    leaseMs: config.TIMESHARE_LEASE_MS,
    supervisionMs: supervision,
    runForMs: () => lease.runForMs(),
    balancer: {
      enabled: config.TIMESHARE_BALANCER === 'on',
      threshold: config.TIMESHARE_BALANCER_THRESHOLD,
    },
    observe: metrics.observe,
    onCrash: metrics.crashed,
    spareRunner: config.TIMESHARE_SPARE_RUNNER === 'on',
    locks,
  });
  metrics.countRunning(() => supervisor.running.length);

  let polling: Promise<void> | null = null;
  const poll = () => {
    polling ??= client
      .assignments(nodeId)
      .then((a) => supervisor.reconcile(a))
      .catch((err) => logger.warn({ err: String(err) }, 'reading assignments failed'))
      .finally(() => {
        polling = null;
      });
  };

  const sub = connectRedis(config.REDIS_URL, { blocking: true, log: logger });
  sub.on('message', (channel: string, raw: string) => {
    if (channel === names.nodeChannel(nodeId)) return poll();
    try {
      const msg = JSON.parse(raw) as ControlMessage;
      if (supervisor.control(msg.jobId, msg.action, msg.queueSeq))
        logger.info({ jobId: msg.jobId, queueSeq: msg.queueSeq, action: msg.action }, 'control request');
    } catch {
      // not ours
    }
  });
  await sub.subscribe(names.nodeChannel(nodeId), names.controlChannel);
  poll();

  const pollTimer = setInterval(poll, config.TIMESHARE_ASSIGNMENT_POLL_MS);
  const heartbeatRetries = heartbeatRetryDelays(config.TIMESHARE_HEARTBEAT_MS);
  const heartbeatTimer = setInterval(() => {
    client
      .heartbeat(
        nodeId,
        devices.map((d) => ({
          index: d.index,
          // A byte count, as the protocol has it: a share that is not whole must not cost the node.
          freeMemoryBytes: Math.max(0, Math.floor(d.memoryBytes - supervisor.usedBytes(d.index))),
        })),
        heartbeatRetries,
      )
      .then((sentAt) => {
        lease.accepted(sentAt);
        supervisor.leaseRenewed();
      })
      .catch((err) => {
        // Refused (4xx) is not a network blip: every heartbeat after it fails alike, and the
        // scheduler will mark the node lost.
        if (!(err instanceof ControlPlaneError)) return logger.warn({ err: String(err) }, 'heartbeat failed');
        logger.error({ err: String(err), status: err.status }, 'heartbeat refused');
        if (err.status === 404) registerAgain();
      });
  }, config.TIMESHARE_HEARTBEAT_MS);

  // The node released from this key (POST /v1/nodes/{id}/release): its heartbeats are refused as
  // another's node. Its jobs stop themselves once the daemon is silent (supervision), and it
  // registers again — refused (409) until the fence has passed, then the node is ready and its jobs
  // requeued. Before, the daemon logged the refusal forever and the node stayed lost until restarted.
  let reregistering: Promise<void> | null = null;
  function registerAgain(): void {
    if (stopping) return;
    reregistering ??= register()
      .then((id) => {
        if (id === nodeId) return void logger.info({ nodeId }, 'node registered again after its release');
        // Another node row: everything this process holds names the old one; a fresh start is simpler.
        logger.error({ nodeId, now: id }, 'registered again as another node; restarting');
        process.exit(75);
      })
      .catch((err) => logger.warn({ err: String(err) }, 'registering again failed; will retry'))
      .finally(() => (reregistering = null));
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    clearInterval(pollTimer);
    logger.info(
      { signal, jobs: supervisor.running.length },
      'draining: jobs checkpoint and return to the queue',
    );
    // Said first, so the scheduler does not place the jobs handed back below onto this node again.
    await client
      .drain(nodeId)
      .catch((err) => logger.warn({ err: String(err) }, 'could not mark the node draining'));
    await supervisor.drain(config.TIMESHARE_DRAIN_TIMEOUT_MS);
    // The jobs' last checkpoints and outcomes; what the API cannot take now stays on disk.
    const undelivered = await outbox.idle(10_000);
    if (undelivered) logger.warn({ reports: undelivered }, 'reports left in the outbox for the next start');
    outbox.close();
    clearInterval(heartbeatTimer);
    sub.disconnect();
    locks.close();
    lockRedis.disconnect();
    await metricsServer?.close();
    logger.info('worker-node stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  logger.fatal({ err: String(err) }, 'worker-node failed to start');
  process.exit(1);
});
