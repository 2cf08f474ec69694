/** A page of API keys (a tenant's or the node keys) as the admin commands print it. */
import type { components } from '../sdk/src/index.js';
import type { Context } from './context.js';
import { emit, table } from './output.js';
import { printMore } from './timeline-options.js';

/** The API's pages of node keys and of a tenant's keys, the same shape (api/http/schemas.ts). */
type KeyPage = components['schemas']['NodeKeyList'] | components['schemas']['TenantKeyList'];

export function emitKeyPage(c: Context, page: KeyPage): void {
  emit(c, page, () => {
    console.log(
      table(
        ['id', 'name', 'prefix', 'created', 'last used', 'revoked'],
        page.data.map((k) => [k.id, k.name, k.prefix, k.createdAt, k.lastUsedAt, k.revokedAt]),
      ),
    );
    printMore(page.nextCursor);
  });
}
