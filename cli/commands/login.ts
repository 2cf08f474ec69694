/** `timeshare login`: exchange an API key for a token and cache both (and/or keep an admin key). */
import type { Command } from 'commander';
import { readCredentials, writeCredentials, credentialsPath } from '../config.js';
import { apiUrlOf, CliError, exchangeKey, type Context } from '../context.js';
import { emit } from '../output.js';

async function readStdinLine(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('API key: ');
  let data = '';
  for await (const chunk of process.stdin) {
    data += chunk;
    if (data.includes('\n')) break;
  }
  return data.split('\n')[0]!.trim();
}

export function loginCommand(program: Command, ctx: () => Context): void {
  program
    .command('login')
    .description(
      'exchange an API key for a token (cached, mode 0600) — the key is read from stdin if not given',
    )
    .option('--api-key <key>', 'tenant API key (else $TIMESHARE_API_KEY, else stdin)')
    .option('--admin-key <key>', 'also keep this admin key for the admin commands')
    .action(async (opts: { apiKey?: string; adminKey?: string }) => {
      const c = ctx();
      const creds = await readCredentials();
      const apiUrl = apiUrlOf(program.opts(), creds);
      const next = { ...creds, apiUrl };
      if (opts.adminKey) next.adminKey = opts.adminKey;
      let role = 'admin';
      let tenant: { id: string; name: string } | null = null;
      let expiresAt: string | null = null;
      if (!opts.adminKey || opts.apiKey) {
        const apiKey = opts.apiKey ?? process.env.TIMESHARE_API_KEY ?? (await readStdinLine());
        if (!apiKey) throw new CliError('invalid_request', 'no API key given');
        const t = await exchangeKey(apiUrl, apiKey);
        Object.assign(next, { apiKey, token: t.token, expiresAt: t.expiresAt });
        role = t.role;
        tenant = t.tenant;
        expiresAt = t.expiresAt;
      }
      await writeCredentials(next);
      emit(c, { apiUrl, role, tenant, expiresAt, credentials: credentialsPath() }, () => {
        const who = tenant ? `tenant ${tenant.name}` : role;
        console.log(`logged in to ${apiUrl} as ${who}${expiresAt ? ` (token until ${expiresAt})` : ''}`);
      });
    });

  program
    .command('logout')
    .description('forget the cached token and keys')
    .action(async () => {
      await writeCredentials({});
      emit(ctx(), { loggedOut: true }, () => console.log('logged out'));
    });
}
