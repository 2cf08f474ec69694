/**
 * The OpenAPI 3.1 document, generated from the zod schemas the routes validate with. Each route
 * module registers its paths next to its handlers, so the document cannot drift from the code; the
 * error responses are derived here from what the stack in front of every route can answer (see
 * app.ts and route-gate.ts), and the same declaration feeds the route table the gate enforces.
 */
import {
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  type RouteConfig,
  type ResponseConfig,
} from '@asteasolutions/zod-to-openapi';
import type { ZodType } from 'zod';
import { errorCatalogue, type ErrorCode } from '../../common/errors.js';
import { errorSchema } from './schemas.js';
import { recordRoute } from './route-table.js';

export function createRegistry(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT, or the admin key',
  });
  return registry;
}

export const json = (schema: ZodType, description = 'OK'): ResponseConfig => ({
  description,
  content: { 'application/json': { schema } },
});

/** Response headers, as plain OpenAPI header objects (mergeable, unlike a zod object). */
type Headers = Record<
  string,
  { description: string; schema: { type: 'integer' | 'string'; minimum?: number; enum?: string[] } }
>;

/** `Retry-After` as the API sends it (api/http/errors.ts): whole seconds. */
export const retryAfter = (description = 'Seconds to wait before retrying'): Headers => ({
  'Retry-After': { description, schema: { type: 'integer' as const, minimum: 0 } },
});
const responseHeaders: Partial<Record<number, Headers>> = {
  405: { Allow: { description: 'The methods this path has', schema: { type: 'string' as const } } },
  429: retryAfter('Seconds to wait before retrying, on `rate_limited` (a `quota_exceeded` answer has none)'),
  503: retryAfter(),
};

/** One error response per status, whatever codes share it (429: quota or rate). */
function errorResponses(
  codes: readonly ErrorCode[],
  extraHeaders: Partial<Record<number, Headers>>,
): RouteConfig['responses'] {
  const byStatus = new Map<number, string[]>();
  for (const code of codes) {
    const { status, description } = errorCatalogue[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), `\`${code}\`: ${description}`]);
  }
  const out: RouteConfig['responses'] = {};
  for (const [status, lines] of byStatus) {
    out[String(status)] = {
      description: lines.join(' '),
      headers:
        responseHeaders[status] || extraHeaders[status]
          ? { ...responseHeaders[status], ...extraHeaders[status] }
          : undefined,
      content: { 'application/json': { schema: errorSchema } },
    };
  }
  return out;
}

/** What any request can meet before or around its route: bad headers, limits, failures. */
const everywhere: ErrorCode[] = [
  'unauthorized', // an invalid Authorization header is refused on every route, public ones too
  'method_not_allowed',
  'request_header_fields_too_large',
  'rate_limited',
  'internal',
  'unavailable',
];

export interface RouteDeclaration extends Omit<RouteConfig, 'responses' | 'operationId' | 'description'> {
  operationId: string;
  description: string;
  tags: [keyof typeof tags];
  /** Success (and other non-error) responses; error responses are derived, see `errors`. */
  responses: RouteConfig['responses'];
  /** Needs credentials (default). */
  auth?: boolean;
  /** Limited per client address even with credentials. */
  perAddress?: boolean;
  /** Error codes the handler itself raises beyond those derived from the route's shape. */
  errors?: ErrorCode[];
  /** Headers the route's own error answers carry, by status (e.g. 409 with `Retry-After`). */
  errorHeaders?: Partial<Record<number, Headers>>;
}

/**
 * Registers a path with the error responses its shape implies: every route's (`everywhere`, and
 * 400: a query is checked on every route, route-gate.ts), 403 with credentials, 404 with a
 * path parameter, 413 with a body, plus the route's own `errors`.
 */
export function registerRoute(registry: OpenAPIRegistry, route: RouteDeclaration): void {
  const { auth = true, perAddress = false, errors = [], errorHeaders = {}, ...config } = route;
  const body = config.request?.body !== undefined;
  // A declared body is required unless the route says otherwise (OpenAPI's default is the reverse):
  // the server refuses its absence (json-body.ts), and the document says so.
  const bodyRequired = body && config.request!.body!.required !== false;
  if (bodyRequired)
    config.request = { ...config.request, body: { ...config.request!.body!, required: true } };
  const codes: ErrorCode[] = [...everywhere, ...errors];
  const params = config.path.includes('{');
  const query = config.request?.query !== undefined;
  // Every route: a query string that does not decode, or parameters a route does not declare.
  codes.push('invalid_request');
  if (auth) codes.push('forbidden');
  if (params) codes.push('not_found');
  if (body) codes.push('payload_too_large');
  const responses: RouteConfig['responses'] = { ...errorResponses(codes, errorHeaders), ...config.responses };
  registry.registerPath({ ...config, responses, security: auth ? [{ bearer: [] }] : [] });
  recordRoute(registry, {
    method: config.method.toUpperCase(),
    path: config.path,
    auth,
    body,
    bodyRequired,
    query,
    perAddress,
  });
}

/** The tags routes may carry (the document's lint refuses others). */
const tags = {
  auth: 'Exchanging API keys for tokens',
  jobs: 'Submitting, listing and cancelling jobs; their events, metrics and checkpoints',
  tenants: 'Tenants, their API keys and quotas (admin)',
  nodes: 'Pools and worker nodes: admin views, and the routes worker daemons call',
  usage: "A tenant's usage and remaining quota",
  webhooks: "A tenant's webhook endpoints and their signed deliveries",
  ops: 'Health, readiness, Prometheus metrics and this document',
} as const;

export function generateDocument(registry: OpenAPIRegistry) {
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Timeshare API',
      version: '1.0.0',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      description:
        'Multi-tenant job queue and control plane for RL of language models. Errors are ' +
        '`{"error": {"type", "code", "message", "param"}}`; codes: ' +
        Object.entries(errorCatalogue)
          .map(([c, e]) => `\`${c}\` (${e.status})`)
          .join(', '),
    },
    servers: [{ url: '/' }],
    tags: Object.entries(tags).map(([name, description]) => ({ name, description })),
  });
}
