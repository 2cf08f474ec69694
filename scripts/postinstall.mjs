// Runs after `npm ci`: builds the native engine (when present), generates the Prisma client
// offline, and builds the dashboard (ui/). Every step must work with no network access beyond the
// npm registry.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });
  if (r.status !== 0) {
    console.error(`postinstall: ${cmd} ${args.join(' ')} failed with ${r.status ?? r.signal}`);
    process.exit(r.status ?? 1);
  }
}

if (existsSync(path.join(root, 'native', 'binding.gyp'))) {
  // Build against the headers of the Node that runs us when they are installed beside it (as on
  // our machines): node-gyp would otherwise try to download them, and there is no network for it.
  const prefix = path.dirname(path.dirname(process.execPath));
  const nodedir =
    process.env.npm_config_nodedir ??
    (existsSync(path.join(prefix, 'include', 'node', 'node.h')) ? prefix : null);
  run(bin('node-gyp'), [
    'rebuild',
    '--directory',
    'native',
    '--jobs',
    'max',
    ...(nodedir ? [`--nodedir=${nodedir}`] : []),
  ]);
}
if (existsSync(path.join(root, 'prisma', 'schema.prisma'))) {
  run(process.execPath, [path.join(root, 'scripts', 'prisma-generate.mjs')]);
}
// The dashboard's bundler is a dev dependency: an install without them (--omit=dev) serves no
// dashboard, and the API says so at /ui.
if (existsSync(path.join(root, 'ui', 'build.mjs'))) {
  if (existsSync(path.join(root, 'node_modules', 'esbuild', 'package.json'))) {
    run(process.execPath, [path.join(root, 'ui', 'build.mjs')]);
  } else {
    console.log(
      'postinstall: esbuild is not installed (dev dependencies omitted): the dashboard is not built',
    );
  }
}
