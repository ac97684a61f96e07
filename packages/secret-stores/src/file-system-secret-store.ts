import type { KeyObject } from 'node:crypto';
import type { Stats } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { defineHeaplet, s } from '@portico/gateway-core';
import { type SecretPurpose, secretError, secretStore } from '@portico/gateway-core/secrets';
import { DEFAULT_FORMAT, formatMappings, formatOf, formatSetting } from './formats.ts';
import { shown } from './shown.ts';

/** The largest secret file read: a key or a password is far smaller, a mistaken path may not be. */
export const MAX_SECRET_FILE = 1024 * 1024;

/** How many files' contents the store keeps; beyond that the least recently read is let go. */
export const FILE_CACHE_ENTRIES = 256;

interface CachedFile {
  /** What the file's metadata said when it was read: a change of any makes it read again. */
  version: string;
  text: string;
  /** Secrets decoded from it, by purpose: decoding a PEM key costs more than a stat. */
  decoded: Map<SecretPurpose, string | KeyObject>;
}

/** Whether an ID can name a file of the directory itself: no separator, no `.` or `..`. */
function isFileName(id: string): boolean {
  return id !== '' && id !== '.' && id !== '..' && !/[/\\\0]/.test(id);
}

/**
 * Secrets in files of one directory, one a file, named by the ID and `suffix` (`agent.password` with
 * suffix `.txt` is `agent.password.txt`). A file is read when its ID is first asked for, and again
 * when its modification time, size or inode changes; at most FILE_CACHE_ENTRIES files are kept.
 */
export const FileSystemSecretStoreHeaplet = defineHeaplet({
  type: 'FileSystemSecretStore',
  kind: 'secret-store',
  config: s.object({
    directory: s.string(),
    format: formatSetting().default(DEFAULT_FORMAT),
    suffix: s.string().default(''),
    mappings: formatMappings(),
    // The incumbents' lease and file watching: a changed file is read again here without either.
    leaseExpiry: s.duration().optional(),
    autoRefresh: s.any().optional(),
  }),
  create: ({ config, environment, configWritten }) => {
    const directory = path.resolve(environment.baseDirectory, config.directory);
    const shownDirectory = shown(directory, config.directory, configWritten?.('directory'));
    const cache = new Map<string, CachedFile>();

    async function current(id: string): Promise<CachedFile | undefined> {
      const file = path.join(directory, `${id}${config.suffix}`);
      let stats: Stats;
      try {
        stats = await stat(file);
      } catch (error) {
        cache.delete(id);
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw unreadable(id, error);
        if (!(await isDirectory(directory))) {
          throw secretError(
            `the directory ${shownDirectory} of FileSystemSecretStore does not exist`,
            'a directory of secret files',
          );
        }
        return undefined;
      }
      if (!stats.isFile()) return undefined;
      if (stats.size > MAX_SECRET_FILE) {
        throw secretError(
          `the file of the secret '${id}' of FileSystemSecretStore is larger than 1 MiB`,
          'a file of at most 1 MiB',
        );
      }
      const version = `${stats.mtimeMs}:${stats.ctimeMs}:${stats.size}:${stats.ino}`;
      let entry = cache.get(id);
      if (entry?.version !== version) {
        let text: string;
        try {
          text = await readFile(file, 'utf8');
        } catch (error) {
          throw unreadable(id, error);
        }
        // One final line break is an editor's or `echo`'s, not the secret's (departure 43).
        entry = { version, text: text.replace(/\r?\n$/, ''), decoded: new Map() };
      }
      // Most recently read last, so that the first is the one to let go.
      cache.delete(id);
      cache.set(id, entry);
      if (cache.size > FILE_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
      return entry;
    }

    return secretStore({
      storeType: 'FileSystemSecretStore',
      find: async (id, purpose) => {
        if (!isFileName(id)) return undefined;
        const entry = await current(id);
        if (entry === undefined) return undefined;
        const known = entry.decoded.get(purpose);
        if (known !== undefined) return known;
        const secret = await formatOf(id, config.format, config.mappings).decode(
          entry.text,
          id,
          purpose,
          'FileSystemSecretStore',
        );
        entry.decoded.set(purpose, secret);
        return secret;
      },
    });
  },
});

function unreadable(id: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException).code ?? 'an error';
  return secretError(
    `FileSystemSecretStore cannot read the file of the secret '${id}' (${code})`,
    'a readable file',
  );
}

async function isDirectory(directory: string): Promise<boolean> {
  try {
    return (await stat(directory)).isDirectory();
  } catch {
    return false;
  }
}
