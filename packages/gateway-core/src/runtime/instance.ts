import { accessSync, constants, existsSync, mkdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseConfigJson } from '../config/json.ts';
import { resolveTokens, resolveTokensCollecting } from '../config/tokens.ts';
import { ErrorCode, isPorticoError, PorticoError } from '../errors.ts';
import { problemsOf } from '../heap/errors.ts';
import type { GatewayEnvironment } from '../heap/heaplet.ts';

/**
 * What a gateway is loaded from: admin.json and config.json (as read, tokens resolved), where they
 * are, and the directories objects may use. From an instance directory (`readInstance`), or given in
 * memory by an embedding application (no files).
 */
export interface Instance {
  /** The instance directory (relative paths in admin.json resolve against it). */
  base: string;
  environment: GatewayEnvironment;
  /** admin.json's path, when it comes from a file (named in problems). */
  adminFile: string | undefined;
  /** config.json's path, when it comes from a file. */
  configFile: string | undefined;
  /** admin.json, or {} when there is none. */
  admin: unknown;
  /** config.json, or undefined when there is none (a Router on `config/routes` serves). */
  config: unknown;
}

/**
 * Reads an instance directory: `config/admin.json` (instance settings), `config/config.json` (the
 * top-level object), with `config/routes/*.json` for its default Router, `scripts/`, `tmp/`. The files
 * are read leniently, as the incumbents read them (comments and trailing commas are accepted); a file
 * that does not parse is a coded error naming the file, line and column. A missing file counts as
 * absent. The temporary directory is admin.json's `temporaryDirectory`, else `temporaryDirectory`
 * given here, else `<base>/tmp`; it is created when missing.
 */
export function readInstance(
  base: string,
  options: {
    temporaryDirectory?: string;
    /**
     * When given, a file that cannot be read (it does not parse) is not thrown: its problems are
     * added here and it counts as absent, so that the other is still read; a token without a value
     * is added here too, left as written (for `portico validate`, which reports them and goes on).
     */
    problems?: PorticoError[];
  } = {},
): Instance {
  const resolved = path.resolve(base);
  const configDirectory = path.join(resolved, 'config');
  const adminFile = path.join(configDirectory, 'admin.json');
  const configFile = path.join(configDirectory, 'config.json');
  const read = (file: string): unknown => {
    if (options.problems === undefined) return readJsonFile(file);
    try {
      return readJsonFile(file, options.problems);
    } catch (error) {
      if (!isPorticoError(error)) throw error;
      options.problems.push(...problemsOf(error));
      return undefined;
    }
  };
  const admin = read(adminFile) ?? {};
  return {
    base: resolved,
    adminFile,
    configFile,
    admin,
    config: read(configFile),
    environment: {
      baseDirectory: resolved,
      configDirectory,
      scriptsDirectory: path.join(resolved, 'scripts'),
      temporaryDirectory: temporaryDirectoryOf(
        resolved,
        admin,
        options.temporaryDirectory ?? path.join(resolved, 'tmp'),
      ),
    },
  };
}

/**
 * The file's JSON, its tokens resolved. With `tokenProblems`, a token without a value is added there
 * and left as written, so that the rest of the file can still be checked.
 */
function readJsonFile(file: string, tokenProblems?: PorticoError[]): unknown {
  if (!existsSync(file)) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    // A directory in its place, a file without read permission: said with the file, not a stack trace.
    throw new PorticoError(ErrorCode.CONFIG, `cannot read the file: ${(error as Error).message}`, {
      file,
      jsonPath: '$',
      expected: 'a readable JSON file',
    });
  }
  if (tokenProblems === undefined) return resolveTokens(parseConfigJson(text, file), { file });
  const { value, problems } = resolveTokensCollecting(parseConfigJson(text, file), { file });
  tokenProblems.push(...problems);
  return value;
}

/**
 * admin.json's temporaryDirectory (relative to `base`), else `fallback`; created when missing, unless
 * it is under a filesystem of the kernel (`/proc`, where Node's recursive mkdir never returns).
 */
export function temporaryDirectoryOf(base: string, admin: unknown, fallback: string): string {
  const configured = (admin as { temporaryDirectory?: unknown } | null)?.temporaryDirectory;
  const dir = typeof configured === 'string' ? path.resolve(base, configured) : fallback;
  if (kernelFilesystemOf(dir) !== undefined) return dir;
  try {
    mkdirSync(dir, { recursive: true });
  } catch {
    // Reported when something first needs it, or by `temporaryDirectoryProblem` when configured.
  }
  return dir;
}

/**
 * Why admin.json's `temporaryDirectory` cannot be used, as a coded error at `$.temporaryDirectory`:
 * it is under `/proc`, `/sys` or `/dev` (`/dev/shm` excepted), it could not be created, it is not a
 * directory, or this process cannot write to it. Undefined when admin.json names none (the default
 * is only reported when something needs it) or when it can be used. `readInstance` created it.
 */
export function temporaryDirectoryProblem(instance: Instance): PorticoError | undefined {
  const configured = (instance.admin as { temporaryDirectory?: unknown } | null)?.temporaryDirectory;
  if (typeof configured !== 'string') return undefined;
  const dir = instance.environment.temporaryDirectory;
  const fault = temporaryDirectoryFault(dir);
  if (fault === undefined) return undefined;
  return new PorticoError(ErrorCode.CONFIG, `temporaryDirectory names ${dir}, which ${fault}`, {
    ...(instance.adminFile === undefined ? {} : { file: instance.adminFile }),
    jsonPath: '$.temporaryDirectory',
    expected: 'a directory the gateway can create and write to, outside /proc, /sys and /dev',
  });
}

function temporaryDirectoryFault(dir: string): string | undefined {
  const kernel = kernelFilesystemOf(dir);
  if (kernel !== undefined) return `is under ${kernel}, a filesystem of the kernel, not a place for files`;
  try {
    if (!statSync(dir).isDirectory()) return 'is not a directory';
  } catch {
    try {
      // Again, for the reason it failed (a parent that is a file, or that this user cannot write).
      mkdirSync(dir, { recursive: true });
    } catch (error) {
      return `cannot be created: ${(error as Error).message}`;
    }
  }
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (error) {
    return `cannot be written to: ${(error as Error).message}`;
  }
  return undefined;
}

/** Filesystems of the kernel, not for files; `/dev/shm` (shared memory, a tmpfs) is fit for them. */
const KERNEL_FILESYSTEMS = ['/proc', '/sys', '/dev'];

/**
 * `/proc`, `/sys` or `/dev` when `dir` is one of them or lies under one (its deepest existing part
 * taken with links followed, so that a link into /proc counts), else undefined.
 */
function kernelFilesystemOf(dir: string): string | undefined {
  if (process.platform === 'win32') return undefined;
  let existing = path.resolve(dir);
  let rest = '';
  for (;;) {
    try {
      existing = realpathSync(existing);
      break;
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) break;
      rest = path.join(path.basename(existing), rest);
      existing = parent;
    }
  }
  const real = path.join(existing, rest);
  const under = (root: string) => real === root || real.startsWith(`${root}/`);
  if (under('/dev/shm')) return undefined;
  return KERNEL_FILESYSTEMS.find(under);
}
