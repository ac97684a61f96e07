import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { send, waitFor } from './http.ts';

/** A real nginx started by a spec, in the foreground, with every path under its own prefix. */
export interface RunningNginx {
  url: string;
  /** Its folder: configuration, logs, and whatever files the spec writes there. */
  prefix: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** True when `nginx -v` runs. */
export function nginxInstalled(): boolean {
  try {
    execFileSync('nginx', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A free loopback port (for nginx, which is told its port). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Starts nginx on 127.0.0.1 with one worker and its own prefix, pid, error log and temporary paths;
 * `http` gives the rest of the `http` block (log format, `server` with its `listen`), from the port
 * and the prefix. Resolves once `GET /ready` answers 200, which the spec's server must serve.
 */
export async function startNginx(
  http: (at: { port: number; prefix: string }) => string,
): Promise<RunningNginx> {
  const prefix = mkdtempSync(path.join(os.tmpdir(), 'portico-e2e-nginx-'));
  // Started as root, nginx reads files as its worker user (nobody): mkdtemp's 0700 keeps it out.
  chmodSync(prefix, 0o755);
  for (const dir of ['logs', 'temp']) mkdirSync(path.join(prefix, dir), { recursive: true });
  const port = await freePort();
  const temp = (name: string) => path.join(prefix, 'temp', name);
  const config = path.join(prefix, 'nginx.conf');
  writeFileSync(
    config,
    `worker_processes 1;
daemon off;
master_process on;
pid ${path.join(prefix, 'nginx.pid')};
error_log ${path.join(prefix, 'logs/error.log')} warn;
events { worker_connections 256; }
http {
  client_body_temp_path ${temp('client_body')};
  proxy_temp_path ${temp('proxy')};
  fastcgi_temp_path ${temp('fastcgi')};
  uwsgi_temp_path ${temp('uwsgi')};
  scgi_temp_path ${temp('scgi')};
  default_type text/plain;
${http({ port, prefix })}
}
`,
  );
  const child = spawn('nginx', ['-p', prefix, '-c', config, '-e', path.join(prefix, 'logs/error.log')], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    'nginx to answer',
    async () => (await send(`${url}/ready`).catch(() => undefined))?.status === 200,
    { timeoutMs: 10_000 },
  );
  return {
    url,
    prefix,
    process: child,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGQUIT');
      await exited;
    },
  };
}
