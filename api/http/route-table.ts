/**
 * The routes this API serves, as the route modules declare them to the OpenAPI registry. The gate in
 * front of body parsing (route-gate.ts) matches requests against it, so that what the document says
 * about a route (who may call it, whether it takes a body) is also what the server enforces.
 */
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';

export interface RouteEntry {
  /** Upper case, as in `req.method`. */
  method: string;
  /** The OpenAPI template, `/v1/jobs/{id}`. */
  path: string;
  /** Needs credentials. */
  auth: boolean;
  /** Declares a request body (only those routes read one). */
  body: boolean;
  /** The body must be sent (`required` not false in the declaration); json-body.ts refuses its absence. */
  bodyRequired: boolean;
  /** Declares query parameters (their schema validates them); a route that declares none takes none. */
  query: boolean;
  /** Limited per client address even with credentials (the token exchange). */
  perAddress: boolean;
}

const tables = new WeakMap<OpenAPIRegistry, RouteEntry[]>();

export function recordRoute(registry: OpenAPIRegistry, entry: RouteEntry): void {
  let table = tables.get(registry);
  if (!table) tables.set(registry, (table = []));
  table.push(entry);
}

export const routesOf = (registry: OpenAPIRegistry): readonly RouteEntry[] => tables.get(registry) ?? [];

/** The routes of one path, by method (HEAD answers where GET does, as Express does). */
export type PathRoutes = ReadonlyMap<string, RouteEntry>;

/**
 * A matcher with Express's defaults: case-insensitive, an optional trailing slash, a parameter is one
 * non-empty segment. A path several templates match (`/v1/nodes/register` and `/v1/nodes/{id}/…`
 * cannot, but a future one could) gets the methods of all of them, the first declared winning.
 */
export function compileRoutes(entries: readonly RouteEntry[]): (path: string) => PathRoutes | null {
  const templates = new Map<string, { re: RegExp; methods: Map<string, RouteEntry> }>();
  for (const e of entries) {
    let t = templates.get(e.path);
    if (!t) {
      const pattern = e.path
        .split('/')
        .map((seg) => (seg.startsWith('{') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      templates.set(e.path, (t = { re: new RegExp(`^${pattern}/?$`, 'i'), methods: new Map() }));
    }
    if (!t.methods.has(e.method)) t.methods.set(e.method, e);
    if (e.method === 'GET' && !t.methods.has('HEAD')) t.methods.set('HEAD', e);
  }
  const all = [...templates.values()];
  return (path) => {
    let found: Map<string, RouteEntry> | null = null;
    for (const t of all) {
      if (!t.re.test(path)) continue;
      if (!found) found = new Map(t.methods);
      else for (const [m, e] of t.methods) if (!found.has(m)) found.set(m, e);
    }
    return found;
  };
}
