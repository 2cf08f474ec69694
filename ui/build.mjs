// Builds the dashboard into ui/dist (git-ignored): one minified bundle of the app, React, Mantine
// and uPlot with their CSS, file names carrying a content hash, and index.html pointing at them.
// Run by scripts/postinstall.mjs (so `npm ci` leaves a servable dashboard) and `npm run ui:build`.
// Nothing is fetched at run time: the page loads only these files from the API's own origin.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

const uiDir = path.dirname(fileURLToPath(import.meta.url));

export async function buildDashboard({ outDir = path.join(uiDir, 'dist'), quiet = false } = {}) {
  const started = Date.now();
  // Built beside the target and renamed into place, so a running API never serves half a build.
  const staging = `${outDir}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: { app: path.join(uiDir, 'src', 'main.tsx') },
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
    jsx: 'automatic',
    outdir: path.join(staging, 'assets'),
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    metafile: true,
    legalComments: 'linked',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: quiet ? 'error' : 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((f) => path.basename(f));
  const js = outputs.find((f) => /^app-.*\.js$/.test(f));
  const css = outputs.find((f) => /^app-.*\.css$/.test(f));
  if (!js || !css) throw new Error(`ui build: missing outputs in ${outputs.join(', ')}`);
  const html = readFileSync(path.join(uiDir, 'index.html'), 'utf8')
    .replace('%CSS%', `/ui/assets/${css}`)
    .replace('%JS%', `/ui/assets/${js}`);
  writeFileSync(path.join(staging, 'index.html'), html);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(path.dirname(outDir), { recursive: true });
  renameSync(staging, outDir);
  const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
  if (!quiet)
    console.log(
      `ui: built ${path.relative(process.cwd(), outDir) || outDir} in ${Date.now() - started} ms (${(bytes / 1024).toFixed(0)} KiB)`,
    );
  return { outDir, bytes };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await buildDashboard();
}
