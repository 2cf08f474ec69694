/** A page of API keys (a tenant's or the node keys) as the admin commands print it. */
import type { Context } from './context.js';
import { emit, table } from './output.js';
import { printMore } from './timeline-options.js';

export interface KeyPage {
  data: {
    id: string;
    name: string | null;
    prefix: string;
    createdAt: string;
    lastUsedAt: string | null;
    revokedAt: string | null;
  }[];
  nextCursor: string | null;
}

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
