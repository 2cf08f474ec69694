/** `timeshare admin nodes list|timeline|release|key|keys|revoke-key`: worker nodes and their keys. */
import type { Command } from 'commander';
import { unwrap } from '../../sdk/src/index.js';
import type { Context } from '../context.js';
import { parseInteger } from '../numeric-options.js';
import { emit, table } from '../output.js';
import { emitKeyPage } from '../key-table.js';
import { addTimelineOptions, printMore, timelineQuery, type TimelineOptions } from '../timeline-options.js';

export function adminNodeCommands(admin: Command, ctx: () => Context): void {
  const nodes = admin.command('nodes').description('worker nodes');
  nodes.command('list').action(async () => {
    const c = ctx();
    const { data } = await unwrap((await c.admin()).GET('/v1/nodes'));
    emit(c, data, () =>
      console.log(
        table(
          ['id', 'name', 'pool', 'status', 'devices', 'last heartbeat'],
          data.map((n) => [n.id, n.name, n.pool, n.status, n.devices.length, n.lastHeartbeatAt]),
        ),
      ),
    );
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
