/**
 * Entry point of the worker-node daemon: `node dist/worker-node/main.js --virtual-devices 2`.
 *
 * Today it registers the node's virtual devices and heartbeats; running job stages on the native
 * engine under device locks lands with the worker issue (see docs/architecture.md).
 */
import { createLogger } from '../common/logger.js';
import { loadWorkerConfig } from './config.js';
import { ControlPlaneClient, type DeviceReport } from './control-plane-client.js';

const config = loadWorkerConfig();
const logger = createLogger('worker-node', config.LOG_LEVEL);
const client = new ControlPlaneClient(config.TIMESHARE_API_URL, config.TIMESHARE_NODE_KEY);

const devices: DeviceReport[] = Array.from({ length: config.virtualDevices }, (_, index) => ({
  index,
  kind: 'cpu-virtual',
  memoryBytes: config.deviceMemory,
  freeMemoryBytes: config.deviceMemory,
  threads: config.threadsPerDevice,
}));

async function main(): Promise<void> {
  const nodeId = await client.register({
    name: config.TIMESHARE_NODE_NAME,
    pool: config.TIMESHARE_POOL,
    deviceType: 'cpu-virtual',
    devices,
  });
  logger.info({ nodeId, devices: devices.length }, 'node registered');
  const timer = setInterval(() => {
    client
      .heartbeat(
        nodeId,
        devices.map((d) => ({ index: d.index, freeMemoryBytes: d.freeMemoryBytes })),
      )
      .catch((err) => logger.warn({ err: String(err) }, 'heartbeat failed'));
  }, config.TIMESHARE_HEARTBEAT_MS);
  const shutdown = () => {
    clearInterval(timer);
    logger.info('worker-node stopping');
    process.exit(0);
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

main().catch((err) => {
  logger.fatal({ err: String(err) }, 'worker-node failed to start');
  process.exit(1);
});
