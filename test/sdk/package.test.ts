/**
 * The SDK as a programmer outside this repository gets it: `npm pack` of sdk/ (its `prepare` builds
 * dist/ with tsc), the tarball installed into a project without TypeScript tooling, and a plain
 * `node` ESM script that imports the client, `allJobMetrics` and the token renewal from
 * `@timeshare/sdk` and drives a real API. The package used to ship only .ts files
 * (ERR_UNKNOWN_FILE_EXTENSION under plain node) and to export neither helper
 * (ERR_PACKAGE_PATH_NOT_EXPORTED).
 *
 * Nothing is downloaded: the pack runs in a copy of sdk/ beside a link to this repository's
 * node_modules (tsc and @types/node, as in the repository, and nothing built lands in sdk/), and
 * the install is `--offline` with an empty cache of its own, the SDK's runtime dependencies copied
 * from node_modules first, as `npm ci` left them.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../helpers/processes.js';
import { startHarness, type Harness } from '../helpers/api-harness.js';

const execFileAsync = promisify(execFile);
const sdkDir = path.join(repoRoot, 'sdk');
let h: Harness;
let tmp: string;
before(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'sdk-package-'));
  h = await startHarness();
});
after(async () => {
  await h.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** A command's output; its failure with what it printed. Not spawnSync: the API runs in this process. */
async function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) {
  try {
    return (await execFileAsync(cmd, args, { cwd, env, encoding: 'utf8', timeout: 60_000 })).stdout;
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    throw new Error(`${cmd} ${args.join(' ')} in ${cwd}: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

/** The packages `names` need at run time, as this repository's node_modules holds them. */
function runtimeClosure(names: string[], seen = new Set<string>()): Set<string> {
  for (const name of names) {
    if (seen.has(name)) continue;
    seen.add(name);
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'node_modules', name, 'package.json'), 'utf8'));
    runtimeClosure(Object.keys(pkg.dependencies ?? {}), seen);
  }
  return seen;
}

test('the packed SDK installs without TypeScript and runs under plain node', async () => {
  const npmFlags = ['--offline', '--cache', path.join(tmp, 'npm-cache'), '--no-audit', '--no-fund'];
  // sdk/ copied without anything built, beside the repository's node_modules (tsc, @types/node).
  const work = path.join(tmp, 'work');
  mkdirSync(work);
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(work, 'node_modules'), 'dir');
  cpSync(sdkDir, path.join(work, 'sdk'), {
    recursive: true,
    filter: (src) => !['dist', 'node_modules'].includes(path.relative(sdkDir, src).split(path.sep)[0]!),
  });
  const [packed] = JSON.parse(
    await run('npm', ['pack', '--json', '--pack-destination', tmp, ...npmFlags], path.join(work, 'sdk')),
  ) as { filename: string; files: { path: string }[] }[];
  const files = packed!.files.map((f) => f.path);
  for (const f of ['dist/index.js', 'dist/index.d.ts', 'dist/api-key.js', 'dist/metrics.js', 'openapi.json'])
    assert.ok(files.includes(f), `${f} is packed: ${files.join(', ')}`);
  assert.deepEqual(
    files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')),
    [],
    'no TypeScript source: plain node cannot load it',
  );

  // A project of a user's: no TypeScript, no tsx, no registry.
  const project = path.join(tmp, 'project');
  mkdirSync(path.join(project, 'node_modules'), { recursive: true });
  writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'sdk-user', version: '1.0.0', private: true, type: 'module' }),
  );
  const sdkPackage = JSON.parse(readFileSync(path.join(sdkDir, 'package.json'), 'utf8'));
  for (const name of runtimeClosure(Object.keys(sdkPackage.dependencies ?? {})))
    cpSync(path.join(repoRoot, 'node_modules', name), path.join(project, 'node_modules', name), {
      recursive: true,
    });
  await run('npm', ['install', path.join(tmp, packed!.filename), ...npmFlags], project);
  assert.ok(!existsSync(path.join(project, 'node_modules', 'typescript')));
  assert.ok(!existsSync(path.join(project, 'node_modules', 'tsx')));

  writeFileSync(
    path.join(project, 'plain.mjs'),
    `import { createRequire } from 'node:module';
import {
  allJobMetrics,
  clientFromApiKey,
  createTimeshareClient,
  renewOnUnauthorized,
  TimeshareError,
  unwrap,
} from '@timeshare/sdk';

const [baseUrl, apiKey] = process.argv.slice(2);
const doc = createRequire(import.meta.url)('@timeshare/sdk/openapi.json');
const client = clientFromApiKey(baseUrl, apiKey);
const job = await unwrap(
  client.POST('/v1/jobs', { body: { name: 'from-a-tarball', workflow: { task: { name: 'addition' } } } }),
);
const points = await allJobMetrics(client, job.id, { name: 'reward_mean' });
let refused = null;
try {
  await unwrap(createTimeshareClient({ baseUrl }).GET('/v1/usage'));
} catch (err) {
  refused = err instanceof TimeshareError ? err.code : String(err);
}
console.log(JSON.stringify({ job: job.name, points: points.length, refused, renew: typeof renewOnUnauthorized, openapi: doc.openapi }));
`,
  );
  const t = await h.createTenant();
  // Plain node: none of this process's loaders (tsx) reach it.
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const out = await run(process.execPath, ['plain.mjs', h.api.url, t.apiKey], project, env);
  assert.deepEqual(JSON.parse(out), {
    job: 'from-a-tarball',
    points: 0,
    refused: 'unauthorized',
    renew: 'function',
    openapi: JSON.parse(readFileSync(path.join(sdkDir, 'openapi.json'), 'utf8')).openapi,
  });
});
