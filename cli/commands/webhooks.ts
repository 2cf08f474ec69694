/** `timeshare webhooks …`: your webhook endpoints, their deliveries, and replays. */
import type { Command } from 'commander';
import { unwrap, type components } from '../../sdk/src/index.js';
import type { Context } from '../context.js';
import { parseInteger } from '../numeric-options.js';
import { emit, table } from '../output.js';

type EventType = NonNullable<components['schemas']['CreateWebhookEndpoint']['events']>[number];
type DeliveryStatus = components['schemas']['WebhookDelivery']['status'];

export function webhookCommands(program: Command, ctx: () => Context): void {
  const hooks = program.command('webhooks').description('signed notifications of your jobs’ state changes');

  hooks
    .command('create <url>')
    .description('register an endpoint; prints its signing secret once')
    .option('--event <type...>', 'only these event types (default: all), e.g. job.failed job.succeeded')
    .option('--description <text>', 'a note for yourself')
    .action(async (url: string, opts: { event?: EventType[]; description?: string }) => {
      const c = ctx();
      const ep = await unwrap(
        (await c.tenant()).POST('/v1/webhooks', {
          body: { url, events: opts.event, description: opts.description },
        }),
      );
      emit(c, ep, () => console.log(`webhook ${ep.id} → ${ep.url}\nsecret (shown once): ${ep.secret}`));
    });

  hooks
    .command('list')
    .description('your endpoints')
    .action(async () => {
      const c = ctx();
      const { data } = await unwrap((await c.tenant()).GET('/v1/webhooks'));
      emit(c, data, () =>
        console.log(
          table(
            ['id', 'url', 'events', 'created'],
            data.map((e) => [e.id, e.url, e.events.length ? e.events.join(' ') : 'all', e.createdAt]),
          ),
        ),
      );
    });

  hooks
    .command('delete <id>')
    .description('delete an endpoint and its deliveries')
    .action(async (id: string) => {
      const c = ctx();
      await unwrap((await c.tenant()).DELETE('/v1/webhooks/{id}', { params: { path: { id } } }));
      emit(c, { deleted: id }, () => console.log(`deleted ${id}`));
    });

  hooks
    .command('deliveries <id>')
    .description("an endpoint's deliveries, newest first")
    .option('--status <status>', 'pending, succeeded or failed')
    .option('--limit <n>', 'at most this many', parseInteger, 50)
    .option('--after <cursor>', 'the nextCursor of a previous page')
    .action(async (id: string, opts: { status?: DeliveryStatus; limit: number; after?: string }) => {
      const c = ctx();
      const page = await unwrap(
        (await c.tenant()).GET('/v1/webhooks/{id}/deliveries', {
          params: { path: { id }, query: { status: opts.status, limit: opts.limit, after: opts.after } },
        }),
      );
      // --json prints the page, cursor included, as `jobs list` does.
      emit(c, page, () => {
        console.log(
          table(
            ['id', 'event', 'status', 'attempts', 'last answer', 'next attempt'],
            page.data.map((d) => [
              d.id,
              `${d.eventType} #${d.eventId}`,
              d.status,
              d.attempts,
              d.lastStatusCode ?? d.lastError,
              d.nextAttemptAt,
            ]),
          ),
        );
        if (page.nextCursor) console.log(`more: --after ${page.nextCursor}`);
      });
    });

  hooks
    .command('replay <id> <deliveryId>')
    .description('send a delivery again (same webhook-id)')
    .action(async (id: string, deliveryId: string) => {
      const c = ctx();
      const d = await unwrap(
        (await c.tenant()).POST('/v1/webhooks/{id}/deliveries/{deliveryId}/replay', {
          params: { path: { id, deliveryId } },
        }),
      );
      emit(c, d, () => console.log(`delivery ${d.id} queued again (${d.webhookId})`));
    });
}
