/** Entry point of the API process: `node dist/api/main.js` (or `tsx api/main.ts`). */
import cluster from 'node:cluster';
import { CONFIG_EXIT_CODE, configOrExit } from '../common/config.js';
import { loadConfig } from './config.js';
import { createLogger } from '../common/logger.js';
import { runPrimary } from './cluster.js';
import { startApi } from './server.js';

const config = configOrExit('api', () => loadConfig());
const logger = createLogger('api', config.LOG_LEVEL);

if (config.TIMESHARE_API_WORKERS > 1 && cluster.isPrimary) {
  runPrimary(config.TIMESHARE_API_WORKERS, logger);
} else {
  startWorker();
}

function startWorker(): void {
  startApi(config, logger).then(
    (api) => {
      logger.info({ url: api.url }, 'api listening');
      const shutdown = (signal: string) => {
        logger.info({ signal }, 'shutting down');
        api.stop().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once('SIGTERM', () => shutdown('SIGTERM'));
      process.once('SIGINT', () => shutdown('SIGINT'));
    },
    (err: NodeJS.ErrnoException) => {
      // A port another process holds is the configuration's fault (PORT, HOST): started again it
      // would only fail again, so it exits as a refused configuration does and is not restarted.
      if (err.code === 'EADDRINUSE' || err.code === 'EACCES' || err.code === 'EADDRNOTAVAIL') {
        logger.fatal({ code: err.code }, `cannot listen on ${config.HOST}:${config.PORT}: ${err.message}`);
        process.exit(CONFIG_EXIT_CODE);
      }
      logger.fatal({ err }, 'api failed to start');
      process.exit(1);
    },
  );
}
