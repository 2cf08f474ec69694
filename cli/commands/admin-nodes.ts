/**
 * `timeshare admin nodes list|timeline|cordon|uncordon|release|key|keys|revoke-key`: worker nodes
 * and their keys.
 */
import type { Command } from 'commander';
import { unwrap, type TimeshareClient, type components } from '../../sdk/src/index.js';
import { CliError, type Context } from '../context.js';
import { parseInteger } from '../numeric-options.js';
import { emit, table } from '../output.js';
import { emitKeyPage } from '../key-table.js';
import { addTimelineOptions, printMore, timelineQuery, type TimelineOptions } from '../timeline-options.js';

type Node = components['schemas']['Node'];

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Nodes are named by their machines and identified by the API: accept either. */
async function nodeId(client: TimeshareClient, ref: string): Promise<string> {
  if (uuid.test(ref)) return ref;
  let after: string | undefined;
  do {
    const page = await unwrap(client.GET('/v1/nodes', { params: { query: { limit: 100, after } } }));
    const n = page.data.find((x) => x.name === ref);
    if (n) return n.id;
    after = page.nextCursor ?? undefined;
  } while (after);
  throw new CliError('not_found', `no node named ${ref}`);
}

/** A node's cordon in a few words: `drain` when its jobs are evicted, and the admin's reason. */
export function cordonText(cordon: Node['cordon']): string {
  if (!cordon) return '';
  const what = cordon.evict ? 'drain' : 'cordoned';
  return cordon.reason ? `${what}: ${cordon.reason}` : what;
}

export function adminNodeCommands(admin: Command, ctx: () => Context): void {
  const nodes = admin.command('nodes').description('worker nodes');
  nodes.command('list').action(async () => {
    const c = ctx();
    const { data } = await unwrap((await c.admin()).GET('/v1/nodes'));
    emit(c, data, () =>
      console.log(
        table(
          ['id', 'name', 'pool', 'status', 'cordon', 'devices', 'last heartbeat'],
          data.map((n) => [
            n.id,
            n.name,
            n.pool,
            n.status,
            cordonText(n.cordon),
            n.devices.length,
            n.lastHeartbeatAt,
          ]),
        ),
      ),
    );
  });
  nodes
    .command('cordon <node>')
    .description(
      'take a node (id or name) out of service: from the next scheduling round nothing new is placed on it; ' +
        'its jobs keep running unless --evict. Idempotent; `uncordon` brings it back',
    )
    .option('--reason <text>', 'why, shown with the node (a later cordon without one keeps it)')
    .option(
      '--evict',
      'also move its jobs off (a drain): each checkpoints, returns to the queue and resumes from its checkpoint on another node',
    )
    .action(async (ref: string, opts: { reason?: string; evict?: boolean }) => {
      const c = ctx();
      const client = await c.admin();
      const id = await nodeId(client, ref);
      const body = {
        ...(opts.reason === undefined ? {} : { reason: opts.reason }),
        evict: opts.evict === true,
      };
      const n = await unwrap(client.POST('/v1/nodes/{id}/cordon', { params: { path: { id } }, body }));
      emit(c, n, () =>
        console.log(
          `node ${n.name} (${n.id}) cordoned: nothing new is placed on it` +
            (n.cordon?.evict
              ? '; its jobs checkpoint and resume on other nodes'
              : '; its jobs keep running (--evict moves them off)') +
            (n.cordon?.reason ? `\nreason: ${n.cordon.reason}` : ''),
        ),
      );
    });
  nodes
    .command('uncordon <node>')
    .description('bring a cordoned node (id or name) back into service: jobs may be placed on it again')
    .action(async (ref: string) => {
      const c = ctx();
      const client = await c.admin();
      const id = await nodeId(client, ref);
      const n = await unwrap(client.POST('/v1/nodes/{id}/uncordon', { params: { path: { id } } }));
      emit(c, n, () => console.log(`node ${n.name} (${n.id}) uncordoned: jobs may be placed on it again`));
    });
  addTimelineOptions(
    nodes
      .command('timeline <nodeId>')
      .description("a node's device-lock timeline: who held each device, when, in which stage; oldest first"),
    1000,
  ).action(async (id: string, opts: TimelineOptions) => {
    const c = ctx();
    const query = timelineQuery(opts);
    const page = await unwrap(
      (await c.admin()).GET('/v1/nodes/{id}/timeline', { params: { path: { id }, query } }),
    );
    emit(c, page, () => {
      if (page.data.length === 0) {
        // A page that was full may have had nothing after it: its cursor leads here.
        const since =
          query.since === undefined ? 'after that cursor' : `since ${new Date(query.since).toISOString()}`;
        console.log(`no device-lock holds ${since}`);
        return;
      }
      console.log(
        table(
          ['device', 'job', 'stage', 'start', 'end', 'reason'],
          page.data.map((i) => [i.device, i.job, i.stage, i.start, i.end, i.reason]),
        ),
      );
      printMore(page.nextCursor);
    });
  });
  nodes
    .command('release <nodeId>')
    .description(
      'unbind a node from the node key that registered it: that key can no longer act for it, ' +
        'it is lost until a daemon registers it again (with any key), and its jobs go back to the queue once it has been ' +
        'silent for the node timeout (a daemon of the old key still running them stops them by then)',
    )
    .action(async (id: string) => {
      const c = ctx();
      const r = await unwrap((await c.admin()).POST('/v1/nodes/{id}/release', { params: { path: { id } } }));
      emit(c, r, () =>
        console.log(
          `node ${r.name} (${r.id}) released: it is lost until registered again; its jobs go back to the queue once it has been silent for the node timeout`,
        ),
      );
    });
  nodes
    .command('key <name>')
    .description('create a node key for a worker daemon (TIMESHARE_NODE_KEY; shown once)')
    .action(async (name: string) => {
      const c = ctx();
      // The route reads an optional `name` that its OpenAPI entry does not declare yet.
      const k = await unwrap((await c.admin()).POST('/v1/node-keys', { body: { name } as never }));
      emit(c, k, () => console.log(`node key ${k.id}\nTIMESHARE_NODE_KEY=${k.apiKey}`));
    });
  nodes
    .command('keys')
    .description('node keys, oldest first, revoked ones too: their ids for `revoke-key`, no secrets')
    .option('--limit <n>', 'at most this many', parseInteger, 20)
    .option('--after <cursor>', 'the nextCursor of a previous page')
    .action(async (opts: { limit: number; after?: string }) => {
      const c = ctx();
      const page = await unwrap((await c.admin()).GET('/v1/node-keys', { params: { query: opts } }));
      emitKeyPage(c, page);
    });
  nodes
    .command('revoke-key <keyId>')
    .description(
      'revoke a node key: it mints no more tokens (the one a daemon holds expires on its own; ' +
        '`timeshare admin nodes release <node id>` cuts it off its node at once)',
    )
    .action(async (keyId: string) => {
      const c = ctx();
      await unwrap((await c.admin()).DELETE('/v1/node-keys/{id}', { params: { path: { id: keyId } } }));
      emit(c, { revoked: keyId }, () => console.log(`revoked node key ${keyId}`));
    });
}
