import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { APP_FOLDER } from './app-folder.ts';
import { firstPartyAdvice, firstPartyProvider } from './first-party.ts';

const root = path.resolve(APP_FOLDER, '../..');
const script = path.join(root, 'scripts/first-party-types.mjs');
const file = path.join(APP_FOLDER, 'src/first-party-types.json');

describe('the first-party types', () => {
  it('are what the packages’ portico blocks say (else run `node scripts/first-party-types.mjs`)', () => {
    const wanted = execFileSync(process.execPath, [script, '--print'], { encoding: 'utf8' });
    expect(
      readFileSync(file, 'utf8'),
      `${path.relative(root, file)} is stale: run \`node scripts/first-party-types.mjs\``,
    ).toBe(wanted);
    expect(JSON.parse(wanted)).toMatchObject({
      HeaderFilter: '@portico/filter-header',
      RedirectFilter: '@portico/filter-location-header',
      MappedThrottlingPolicy: '@portico/filter-throttling',
    });
  });

  it('come from packages the app lists in its devDependencies, so that the repository has them all', () => {
    const manifest = JSON.parse(readFileSync(path.join(APP_FOLDER, 'package.json'), 'utf8'));
    const providers = [...new Set(Object.values(JSON.parse(readFileSync(file, 'utf8')) as object))];
    expect(providers.filter((name) => manifest.devDependencies?.[name] === undefined)).toEqual([]);
    // The published server depends on the core and on no plugin.
    const portico = Object.keys(manifest.dependencies).filter((name) => name.startsWith('@portico/'));
    expect(portico).toEqual(['@portico/gateway-core']);
  });

  it('name the package and the command that adds it, by type, alias or Java class name', () => {
    expect(firstPartyAdvice('HeaderFilter')).toBe(
      "'HeaderFilter' is provided by @portico/filter-header: portico plugin add @portico/filter-header",
    );
    expect(firstPartyProvider('RedirectFilter')).toBe('@portico/filter-location-header');
    expect(firstPartyProvider('org.forgerock.openig.filter.HeaderFilter')).toBe('@portico/filter-header');
    expect(firstPartyAdvice('AcmeFilter')).toBeUndefined();
    expect(firstPartyProvider('toString')).toBeUndefined();
  });
});
