// The npm registry reachable here does not serve every foreign-platform build of packages with native
// binaries (biome, turbo). npm then leaves them out of package-lock.json and `npm ci` refuses the lockfile as
// out of sync. This adds a never-installed placeholder entry for each such optional dependency.
// Run it after every `npm install` that changes the lockfile: `npm run fix-lock`.
import fs from 'node:fs';

const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8'));
const pk = lock.packages;
let added = 0;
for (const [path, entry] of Object.entries(pk)) {
  for (const [dep, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = path ? `${path}/node_modules/${dep}` : `node_modules/${dep}`;
    const hoisted = `node_modules/${dep}`;
    if (pk[base] || pk[hoisted]) continue;
    pk[hoisted] = { version: range, dev: entry.dev, optional: true, os: ['none'], cpu: ['none'] };
    added++;
  }
}
fs.writeFileSync('package-lock.json', JSON.stringify(lock, null, 2) + '\n');
console.log('added', added);
