// The C++ engine raises string codes; the one catalogue (common/errors.ts) must know every one of
// them, and every catalogued code must still be raised somewhere (C++ or the TypeScript facade).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { engineErrorCatalogue } from '../../common/errors.js';

const nativeDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function files(dir: string, ext: RegExp, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) {
      if (!['build', 'node_modules', 'test'].includes(name)) files(full, ext, out);
    } else if (ext.test(name)) out.push(full);
  }
  return out;
}

// How C++ raises a code: fail("X", …), EngineError("X", …), make_error(env, "X", …), code_ = "X".
const raised =
  /(?:\bfail|\bEngineError|\bmake_error\s*\([^,()]*,)\s*\(?\s*"([A-Z][A-Z0-9_]*)"|\bcode_\s*=\s*"([A-Z][A-Z0-9_]*)"/g;

function codesIn(sources: string[], pattern: RegExp): Set<string> {
  const found = new Set<string>();
  for (const f of sources)
    for (const m of readFileSync(f, 'utf8').matchAll(pattern)) found.add((m[1] ?? m[2])!);
  return found;
}

test('every code the C++ engine raises is in the catalogue', () => {
  const cpp = codesIn(files(path.join(nativeDir, 'src'), /\.(cc|h)$/), raised);
  assert.ok(cpp.size >= 8, `the scan found the engine's codes: ${[...cpp]}`);
  const unknown = [...cpp].filter((c) => !(c in engineErrorCatalogue));
  assert.deepEqual(unknown, [], 'codes raised in native/src but missing from common/errors.ts');
});

test('every catalogued engine code is raised somewhere', () => {
  const cpp = codesIn(files(path.join(nativeDir, 'src'), /\.(cc|h)$/), raised);
  const ts = codesIn(files(nativeDir, /\.ts$/), /EngineError\(\s*'([A-Z][A-Z0-9_]*)'/g);
  const unused = Object.keys(engineErrorCatalogue).filter((c) => !cpp.has(c) && !ts.has(c));
  assert.deepEqual(unused, []);
});
