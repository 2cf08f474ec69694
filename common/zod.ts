// One zod instance with OpenAPI metadata support: the schemas that validate requests are the ones
// the OpenAPI document is generated from.
import { z } from 'zod';
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';

extendZodWithOpenApi(z);

export { z };
