/**
 * `timeshare admin …`: tenants, API keys and quotas here; pools, nodes and jobs in admin-*.ts
 * (needs the admin key).
 */
import type { Command } from 'commander';
import { unwrap, type TimeshareClient } from '../../sdk/src/index.js';
import { CliError, type Context } from '../context.js';
import { parseInteger, parseNumber } from '../numeric-options.js';
import { emit, table } from '../output.js';
import { emitKeyPage } from '../key-table.js';
import { adminJobCommands } from './admin-jobs.js';
import { adminNodeCommands } from './admin-nodes.js';
import { adminPoolCommands } from './admin-pools.js';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Tenants are named by people and identified by the API: accept either. */
async function tenantId(client: TimeshareClient, ref: string): Promise<string> {
  if (uuid.test(ref)) return ref;
  // Every page: the first held only 20 tenants, and a name past them read as unknown.
  let after: string | undefined;
  do {
    const page = await unwrap(client.GET('/v1/tenants', { params: { query: { limit: 100, after } } }));
    const t = page.data.find((x) => x.name === ref);
    if (t) return t.id;
    after = page.nextCursor ?? undefined;
  } while (after);
  throw new CliError('not_found', `no tenant named ${ref}`);
}

export function adminCommands(program: Command, ctx: () => Context): void {
  const admin = program
    .command('admin')
    .description('administration (TIMESHARE_ADMIN_KEY or `login --admin-key`)');

  const tenants = admin.command('tenants').description('tenants');
  tenants
    .command('create <name>')
    .description('create a tenant; its API key is shown once')
    .option('--weight <w>', 'fair-share weight, 0.01 to 1000 (default 1)', parseNumber)
    .action(async (name: string, opts: { weight?: number }) => {
      const c = ctx();
      const t = await unwrap((await c.admin()).POST('/v1/tenants', { body: { name, weight: opts.weight } }));
      emit(c, t, () => console.log(`tenant ${t.id} ${t.name}\napi key (shown once): ${t.apiKey}`));
    });
  tenants
    .command('list')
    .description('all tenants')
    .action(async () => {
      const c = ctx();
      const { data } = await unwrap((await c.admin()).GET('/v1/tenants'));
      emit(c, data, () =>
        console.log(
          table(
            ['id', 'name', 'weight', 'max active jobs', 'device h/month', 'created'],
            data.map((t) => [
              t.id,
              t.name,
              t.weight,
              t.quota.maxActiveJobs,
              t.quota.deviceHoursPerMonth,
              t.createdAt,
            ]),
          ),
        ),
      );
    });
  tenants
    .command('get <tenant>')
    .description('one tenant (id or name)')
    .action(async (ref: string) => {
      const c = ctx();
      const client = await c.admin();
      const t = await unwrap(
        client.GET('/v1/tenants/{id}', { params: { path: { id: await tenantId(client, ref) } } }),
      );
      emit(c, t, () => console.log(JSON.stringify(t, null, 2)));
    });

  tenants
    .command('set <tenant>')
    .description("change a tenant's fair-share weight (its name is fixed)")
    .requiredOption('--weight <w>', 'fair-share weight, 0.01 to 1000', parseNumber)
    .action(async (ref: string, opts: { weight: number }) => {
      const c = ctx();
      const client = await c.admin();
      const t = await unwrap(
        client.PATCH('/v1/tenants/{id}', {
          params: { path: { id: await tenantId(client, ref) } },
          body: { weight: opts.weight },
        }),
      );
      emit(c, t, () => console.log(`tenant ${t.name}: weight ${t.weight}`));
    });

  const keys = admin.command('keys').description("tenants' API keys");
  keys
    .command('create <tenant>')
    .description('another API key for a tenant (shown once)')
    .action(async (ref: string) => {
      const c = ctx();
      const client = await c.admin();
      const k = await unwrap(
        client.POST('/v1/tenants/{id}/keys', { params: { path: { id: await tenantId(client, ref) } } }),
      );
      emit(c, k, () => console.log(`key ${k.id} (${k.prefix}…)\napi key (shown once): ${k.apiKey}`));
    });
  keys
    .command('list <tenant>')
    .description(
      "a tenant's API keys (id or name), oldest first, revoked ones too: find a leaked key by its prefix, " +
        'then `revoke` it by its id; no secrets',
    )
    .option('--limit <n>', 'at most this many', parseInteger, 20)
    .option('--after <cursor>', 'the nextCursor of a previous page')
    .action(async (ref: string, opts: { limit: number; after?: string }) => {
      const c = ctx();
      const client = await c.admin();
      const page = await unwrap(
        client.GET('/v1/tenants/{id}/keys', {
          params: { path: { id: await tenantId(client, ref) }, query: opts },
        }),
      );
      emitKeyPage(c, page);
    });
  keys
    .command('revoke <tenant> <keyId>')
    .description(
      'revoke a key: it mints no more tokens (tokens already minted expire on their own); ' +
        'find its id by its prefix with `timeshare admin keys list <tenant>`',
    )
    .action(async (ref: string, keyId: string) => {
      const c = ctx();
      const client = await c.admin();
      await unwrap(
        client.DELETE('/v1/tenants/{id}/keys/{keyId}', {
          params: { path: { id: await tenantId(client, ref), keyId } },
        }),
      );
      emit(c, { revoked: keyId }, () => console.log(`revoked ${keyId}`));
    });

  const quota = admin.command('quota').description("tenants' quotas");
  quota.command('get <tenant>').action(async (ref: string) => {
    const c = ctx();
    const client = await c.admin();
    const q = await unwrap(
      client.GET('/v1/tenants/{id}/quota', { params: { path: { id: await tenantId(client, ref) } } }),
    );
    emit(c, q, () => console.log(table(Object.keys(q), [Object.values(q)])));
  });
  quota
    .command('set <tenant>')
    .description('change some limits (the others stay)')
    .option('--max-active-jobs <n>', 'jobs queued or running at once', parseInteger)
    .option('--max-concurrent-devices <n>', 'devices in use at once', parseInteger)
    .option('--max-devices-per-job <n>', 'devices one job may ask for', parseInteger)
    .option('--device-hours-per-month <h>', 'device hours per calendar month', parseNumber)
    .action(
      async (
        ref: string,
        opts: {
          maxActiveJobs?: number;
          maxConcurrentDevices?: number;
          maxDevicesPerJob?: number;
          deviceHoursPerMonth?: number;
        },
      ) => {
        const c = ctx();
        const client = await c.admin();
        const q = await unwrap(
          client.PUT('/v1/tenants/{id}/quota', {
            params: { path: { id: await tenantId(client, ref) } },
            body: opts,
          }),
        );
        emit(c, q, () => console.log(table(Object.keys(q), [Object.values(q)])));
      },
    );

  adminPoolCommands(admin, ctx);
  adminNodeCommands(admin, ctx);
  adminJobCommands(admin, ctx);
}
