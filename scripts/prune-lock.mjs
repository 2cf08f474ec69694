// The registry this project installs from serves only the platform packages it mirrors, so `npm
// install` records optional edges (e.g. msgpackr-extract's darwin/win32 builds) that have no lock
// entry, and `npm ci` then refuses the lock. Run after every `npm install`: drops optional edges
// whose package is absent from the lock; the packages are optional, so nothing is lost.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const present = new Set(Object.keys(lock.packages).map((p) => p.replace(/^.*node_modules\//, '')));
let dropped = 0;
for (const entry of Object.values(lock.packages)) {
  for (const dep of Object.keys(entry.optionalDependencies ?? {})) {
    if (!present.has(dep)) {
      delete entry.optionalDependencies[dep];
      dropped++;
    }
  }
}
writeFileSync(file, JSON.stringify(lock, null, 2) + '\n');
console.log(`prune-lock: dropped ${dropped} optional edge(s) with no lock entry`);
