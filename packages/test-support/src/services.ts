import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/**
 * Where the real test peers are. `test-e2e/services/all.sh` starts them and writes their addresses to
 * `$PORTICO_SERVICES_DIR/env.json` (default /tmp/portico-services); environment variables of the
 * same names take precedence. A suite whose service is missing is skipped with a line saying so,
 * except under CI, where a missing service is an error.
 */
export async function serviceUrl(variable: string, service: string): Promise<string | undefined> {
  const url = process.env[variable] || fromServicesFile(variable);
  const reachable = url !== undefined && (await acceptsWithin(url, 3));
  if (reachable) return url;
  return missing(
    service,
    'is not running',
    url === undefined ? `${variable} is not set` : `nothing answers at ${url}`,
  );
}

/**
 * The path of a program a service script installed and that runs no daemon (Chromium: `chromium.sh`
 * writes `PORTICO_CHROMIUM`), found as `serviceUrl` finds a URL, or undefined: skipped with one
 * line, an error under CI, when the variable is unset or names no executable file.
 */
export function serviceExecutable(variable: string, service: string): string | undefined {
  const file = process.env[variable] || fromServicesFile(variable);
  if (file !== undefined && executable(file)) return file;
  return missing(
    service,
    'is not installed',
    file === undefined ? `${variable} is not set` : `${file} is not executable`,
  );
}

function missing(service: string, state: string, why: string): undefined {
  if (process.env.CI)
    throw new Error(`${service} is required under CI: ${why} (run test-e2e/services/all.sh)`);
  console.warn(`skipped: ${service} ${state} (${why}); start it with test-e2e/services/all.sh`);
  return undefined;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * A setting the services wrote that is not a URL (`PORTICO_SYSLOG_FILE`): from the environment, else
 * from env.json; undefined when neither has it.
 */
export function serviceSetting(variable: string): string | undefined {
  return process.env[variable] || fromServicesFile(variable);
}

function fromServicesFile(variable: string): string | undefined {
  const file = path.join(process.env.PORTICO_SERVICES_DIR ?? '/tmp/portico-services', 'env.json');
  if (!existsSync(file)) return undefined;
  const value = (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>)[variable];
  return typeof value === 'string' && value ? value : undefined;
}

/**
 * `accepts`, asked up to `attempts` times: at the start of a full run on a slow machine, a test worker
 * busy loading its files can see a live local service's connect only after its 1 s timer (three
 * files once failed so, with Redis up the whole time).
 */
async function acceptsWithin(url: string, attempts: number): Promise<boolean> {
  for (let attempt = 1; attempt <= attempts; attempt++) if (await accepts(url)) return true;
  return false;
}

/** True when something accepts TCP connections at the URL's host and port. */
function accepts(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port) });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}
