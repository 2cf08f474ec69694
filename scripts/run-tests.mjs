// `npm test`: type-check, lint, then every *.test.ts under the source folders on Node's own test
// runner (through tsx). Test files run one at a time: integration tests share the machine's two
// cores with the PostgreSQL and Redis they talk to, and each file isolates its own database/prefix.
import { readdirSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const folders = [
  'common',
  'api',
  'scheduler',
  'worker-node',
  'native',
  'prisma',
  'infra',
  'sdk',
  'cli',
  'webhooks',
  'test',
];
const filter = process.argv.slice(2);

function collect(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of entries) {
    if (name === 'node_modules' || name === 'build' || name === 'generated') continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) collect(full, out);
    else if (name.endsWith('.test.ts')) out.push(full);
  }
}

function step(label, cmd, args) {
  console.log(`\n== ${label}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, env: { ...process.env } });
  if (r.status !== 0) {
    console.error(`${label} failed (${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
}

const files = [];
for (const f of folders) collect(path.join(root, f), files);
files.sort();
const selected = filter.length ? files.filter((f) => filter.some((x) => f.includes(x))) : files;
if (selected.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const bin = (n) => path.join(root, 'node_modules', '.bin', n);
if (!filter.length) {
  step('typecheck', bin('tsc'), ['-p', 'tsconfig.json', '--noEmit']);
  step('lint', bin('eslint'), ['--max-warnings=0', '.']);
  step('format', bin('prettier'), ['--check', '.']);
}
step('tests', process.execPath, [
  '--import',
  'tsx',
  '--test',
  '--test-concurrency=1',
  '--test-reporter=spec',
  ...selected.map((f) => path.relative(root, f)),
]);
