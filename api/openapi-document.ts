/**
 * The OpenAPI document without a running server: the route modules register their paths against
 * dependencies that are never connected (a route only touches them when a request arrives), so
 * `npm run openapi` and the SDK drift test need neither PostgreSQL nor Redis.
 */
import { createRegistry, generateDocument } from './http/openapi.js';
import { apiRoutes } from './routes/index.js';
import type { ApiDeps } from './deps.js';
import type { SubmitJob } from './jobs/submit.js';

/** Any property is another placeholder; calling one means a route used a dependency too early. */
function unconnected(path: string): never {
  const fail = () => {
    throw new Error(`${path} is not connected while building the OpenAPI document`);
  };
  return new Proxy(fail, {
    get: (_t, key) => (typeof key === 'symbol' ? undefined : unconnected(`${path}.${key}`)),
    apply: fail,
  }) as never;
}

export function buildOpenApiDocument(): ReturnType<typeof generateDocument> {
  const registry = createRegistry();
  const deps = unconnected('deps') as ApiDeps;
  const submit = unconnected('submit') as SubmitJob;
  apiRoutes(deps, registry, submit, () => null);
  return generateDocument(registry);
}
