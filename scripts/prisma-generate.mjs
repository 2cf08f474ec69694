// `prisma generate` offline: the CLI only checks that a schema-engine binary exists before it
// generates the (Rust-free) client, so point it at a stub that explains itself and exits 1.
// Migrations never use the CLI; see prisma/tools/migrate.ts.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// A folder of its own for each run, removed afterwards: installs leave nothing in the temp folder.
const stubDir = mkdtempSync(path.join(os.tmpdir(), 'timeshare-prisma-'));
const stub = path.join(stubDir, 'schema-engine-offline');
writeFileSync(
  stub,
  '#!/bin/sh\necho "schema engine not available offline: use npm run db:migrate" >&2\nexit 1\n',
);
chmodSync(stub, 0o755);

const r = spawnSync(path.join(root, 'node_modules', '.bin', 'prisma'), ['generate'], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: stub,
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    CHECKPOINT_DISABLE: '1',
  },
});
rmSync(stubDir, { recursive: true, force: true });
process.exit(r.status ?? 1);
