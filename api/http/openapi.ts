/**
 * The OpenAPI 3.1 document, generated from the zod schemas the routes validate with. Each route
 * module registers its paths next to its handlers, so the document cannot drift from the code.
 */
import {
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  type RouteConfig,
  type ResponseConfig,
} from '@asteasolutions/zod-to-openapi';
import type { ZodType } from 'zod';
import { errorCatalogue } from '../../common/errors.js';
import { errorSchema } from './schemas.js';

export function createRegistry(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT, or the admin key',
  });
  return registry;
}

const errorResponse = (description: string): ResponseConfig => ({
  description,
  content: { 'application/json': { schema: errorSchema } },
});

export const json = (schema: ZodType, description = 'OK'): ResponseConfig => ({
  description,
  content: { 'application/json': { schema } },
});

/** Registers a path with the error responses every authenticated route can return. */
export function registerRoute(
  registry: OpenAPIRegistry,
  route: Omit<RouteConfig, 'responses'> & { responses: RouteConfig['responses']; auth?: boolean },
): void {
  const { auth = true, ...config } = route;
  const responses: RouteConfig['responses'] = { ...config.responses };
  for (const code of ['invalid_request', 'unauthorized', 'forbidden', 'not_found', 'internal'] as const) {
    if (!auth && (code === 'unauthorized' || code === 'forbidden')) continue;
    const status = String(errorCatalogue[code].status);
    responses[status] ??= errorResponse(errorCatalogue[code].description);
  }
  registry.registerPath({ ...config, responses, security: auth ? [{ bearer: [] }] : [] });
}

export function generateDocument(registry: OpenAPIRegistry) {
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Timeshare API',
      version: '1.0.0',
      description:
        'Multi-tenant job queue and control plane for RL of language models. Errors are ' +
        '`{"error": {"type", "code", "message", "param"}}`; codes: ' +
        Object.entries(errorCatalogue)
          .map(([c, e]) => `\`${c}\` (${e.status})`)
          .join(', '),
    },
    servers: [{ url: '/' }],
  });
}
