/**
 * `npm run openapi` writes sdk/openapi.json; `npm run sdk:generate` (`--types`) also regenerates
 * the client's types. Neither needs a running server, PostgreSQL or Redis.
 */
import { writeFileSync } from 'node:fs';
import { documentPath, renderDocument, renderTypes, typesPath } from './render.js';

const document = renderDocument();
writeFileSync(documentPath, document);
console.log(`wrote ${documentPath}`);
if (process.argv.includes('--types')) {
  writeFileSync(typesPath, await renderTypes(document));
  console.log(`wrote ${typesPath}`);
}
// Building the document loads modules that keep handles open (prisma, pino); nothing is pending.
process.exit(0);
