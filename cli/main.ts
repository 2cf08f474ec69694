/** The `timeshare` CLI: every command talks to the API through the generated SDK. */
import { Command } from 'commander';
import { createContext, type GlobalOptions } from './context.js';
import { reportError } from './output.js';
import { accountCommands } from './commands/account.js';
import { adminCommands } from './commands/admin.js';
import { checkpointCommands } from './commands/checkpoints.js';
import { jobCommands } from './commands/jobs.js';
import { loginCommand } from './commands/login.js';
import { logsCommand } from './commands/logs.js';
import { metricsCommand } from './commands/metrics.js';
import { queueCommand } from './commands/queue.js';
import { webhookCommands } from './commands/webhooks.js';
import { completionCommand } from './completion.js';
import { exitQuietlyOnBrokenPipe } from './broken-pipe.js';

const program = new Command('timeshare')
  .description('Submit and follow RL jobs on Timeshare')
  .version('0.1.0')
  .option('--api-url <url>', 'API address (else $TIMESHARE_API_URL, else the one you logged in to)')
  .option('--json', 'print the API objects as JSON, for scripts')
  .showHelpAfterError();

const ctx = () => createContext(program.opts<GlobalOptions>());
loginCommand(program, ctx);
jobCommands(program, ctx);
logsCommand(program, ctx);
metricsCommand(program, ctx);
checkpointCommands(program, ctx);
accountCommands(program, ctx);
queueCommand(program, ctx);
webhookCommands(program, ctx);
adminCommands(program, ctx);
completionCommand(program);

exitQuietlyOnBrokenPipe(process.stdout, process.stderr);
try {
  await program.parseAsync(process.argv);
} catch (err) {
  const code = reportError(err, program.opts<GlobalOptions>().json ?? false);
  process.exitCode = process.exitCode || code;
}
