import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A new instance directory whose `scripts/` holds `files` (paths relative to it, package-style
 * subdirectories made as needed): the base directory a test heap's scripts are read from.
 */
export function instanceWithScripts(files: Record<string, string> = {}): string {
  const base = mkdtempSync(path.join(os.tmpdir(), 'portico-scripts-'));
  for (const [name, text] of Object.entries(files)) {
    const file = path.join(base, 'scripts', name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  return base;
}
