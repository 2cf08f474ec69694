/** `timeshare admin pools [list]|timeline|capacity`: device pools. */
import type { Command } from 'commander';
import { unwrap, type components } from '../../sdk/src/index.js';
import type { Context } from '../context.js';
import { emit, table } from '../output.js';
import { addTimelineOptions, printMore, timelineQuery, type TimelineOptions } from '../timeline-options.js';
import { cordonText } from './admin-nodes.js';

type PoolCapacity = components['schemas']['PoolCapacity'];

/** The capacity signal in words: what the pool wants, what it has, and which round said so. */
export function describeCapacity(p: PoolCapacity): string[] {
  return [
    p.updatedAt
      ? `pool ${p.pool}  (scheduling round at ${p.updatedAt})`
      : `pool ${p.pool}  (no scheduling round has seen it: no ready node and no work, all zeros)`,
    `  wanted devices: ${p.wantedDevices} (${p.busyDevices} busy + ${p.queuedDevices} wanted by queued jobs)`,
    `  devices on ready, uncordoned nodes: ${p.devices}, ${p.idleDevices} idle`,
    `  jobs: ${p.runningJobs} placed or running, ${p.queuedJobs} queued`,
  ];
}

export function adminPoolCommands(admin: Command, ctx: () => Context): void {
  const list = async () => {
    const c = ctx();
    const { data } = await unwrap((await c.admin()).GET('/v1/pools'));
    emit(c, data, () =>
      console.log(
        table(
          ['name', 'device type', 'nodes', 'devices'],
          data.map((p) => [p.name, p.deviceType, p.nodes, p.devices]),
        ),
      ),
    );
  };
  // `admin pools` alone still lists them, as it did before it had subcommands.
  const pools = admin.command('pools').description('device pools (alone: list them)').action(list);
  pools.command('list').description('device pools: device type, nodes, devices').action(list);

  addTimelineOptions(
    pools
      .command('timeline <pool>')
      .description(
        "a pool's device-lock timeline: who (job, tenant) held each device of each node, when, in which stage; oldest first",
      ),
    2000,
  ).action(async (name: string, opts: TimelineOptions) => {
    const c = ctx();
    const t = await unwrap(
      (await c.admin()).GET('/v1/pools/{name}/timeline', {
        params: { path: { name }, query: timelineQuery(opts) },
      }),
    );
    emit(c, t, () => {
      // Node names by id, once: looked up per hold, a 2,000-hold page scanned every device each time.
      const nodeNames = new Map(t.devices.map((d) => [d.node, d.nodeName]));
      const nodes = nodeNames.size;
      console.log(
        `pool ${t.pool}: ${t.devices.length} devices on ${nodes} nodes; holds from ${t.since} to ${t.now}, ` +
          `${t.switches} handoffs between jobs`,
      );
      // Cordoned nodes take nothing new: said before the holds, which show only what ran.
      const cordoned = new Map(t.devices.filter((d) => d.nodeCordon).map((d) => [d.node, d]));
      for (const d of cordoned.values())
        console.log(`node ${d.nodeName} ${cordonText(d.nodeCordon)} since ${d.nodeCordon!.cordonedAt}`);
      console.log(
        table(
          ['node', 'device', 'job', 'name', 'tenant', 'stage', 'start', 'end', 'reason'],
          t.data.map((h) => {
            const node = nodeNames.get(h.node) ?? h.node;
            return [node, h.device, h.job, h.jobName, h.tenantName, h.stage, h.start, h.end, h.reason];
          }),
        ),
      );
      printMore(t.nextCursor);
    });
  });

  pools
    .command('capacity <pool>')
    .description(
      'the devices a pool wants (busy + wanted by queued jobs) and has idle, as autoscalers read it',
    )
    .action(async (name: string) => {
      const c = ctx();
      const p = await unwrap(
        (await c.admin()).GET('/v1/pools/{name}/capacity', { params: { path: { name } } }),
      );
      emit(c, p, () => console.log(describeCapacity(p).join('\n')));
    });
}
