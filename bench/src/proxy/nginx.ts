import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The small body every proxied request gets: exactly 100 bytes. */
export const SMALL_BODY = '0123456789'.repeat(10);
/** The streaming scenario's body: 1 MB (1,000,000 bytes), served by the upstream as a static file. */
export const LARGE_BYTES = 1_000_000;
export const LARGE_PATH = '/stream/1mb.bin';

/** `nginx -v` without the prefix (it prints to stderr), or undefined when nginx is not installed. */
export function nginxVersion(): string | undefined {
  const result = spawnSync('nginx', ['-v'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) return undefined;
  return `${result.stdout}${result.stderr}`.trim().replace(/^nginx version: /, '') || undefined;
}

/** The arguments that run nginx in the foreground on a prefix made by one of the writers below. */
export function nginxArgs(prefix: string): string[] {
  return ['-p', prefix, '-c', path.join(prefix, 'nginx.conf'), '-e', path.join(prefix, 'logs/error.log')];
}

/** Everything but the `server` blocks: one worker, no access log, every path under the prefix. */
function common(prefix: string, server: string): string {
  for (const dir of ['logs', 'temp']) mkdirSync(path.join(prefix, dir), { recursive: true });
  const temp = (name: string) => path.join(prefix, 'temp', name);
  return `# Written by bench/src/proxy/nginx.ts
worker_processes 1;
daemon off;
master_process on;
pid ${path.join(prefix, 'nginx.pid')};
error_log ${path.join(prefix, 'logs/error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  default_type application/octet-stream;
  sendfile on;
  client_body_temp_path ${temp('client_body')};
  proxy_temp_path ${temp('proxy')};
  fastcgi_temp_path ${temp('fastcgi')};
  uwsgi_temp_path ${temp('uwsgi')};
  scgi_temp_path ${temp('scgi')};
  # nginx 1.22 closes a client connection after 1,000 requests by default; Node's server never does.
  keepalive_requests 1000000;
  keepalive_timeout 75s;
${server}
}
`;
}

/** What the upstream may do besides answering. */
export interface UpstreamOptions {
  /** A file where it logs every request (nginx's `combined` format), to count the requests it got. */
  accessLog?: string;
}

/**
 * The upstream: nginx answering `return 200` with the 100-byte body on every path, and the 1 MB file
 * on LARGE_PATH (sendfile). Far cheaper per request than any proxy in front of it.
 */
export function writeUpstreamConfig(prefix: string, port: number, options: UpstreamOptions = {}): void {
  const www = path.join(prefix, 'www');
  mkdirSync(path.join(www, path.dirname(LARGE_PATH)), { recursive: true });
  writeFileSync(path.join(www, LARGE_PATH), Buffer.alloc(LARGE_BYTES, 'x'));
  const log = options.accessLog === undefined ? '' : `\n    access_log ${options.accessLog} combined;`;
  const server = `  server {
    listen 127.0.0.1:${port};${log}
    location = ${LARGE_PATH} { root ${www}; }
    location / { default_type text/plain; return 200 '${SMALL_BODY}'; }
  }`;
  writeFileSync(path.join(prefix, 'nginx.conf'), common(prefix, server));
}

/**
 * nginx as a reverse proxy with an upstream keep-alive pool. `locations` are regular expressions
 * checked in order (the equivalent of conditional routes); without them, `location /` takes all.
 */
export function writeProxyConfig(
  prefix: string,
  port: number,
  upstreamPort: number,
  locations?: readonly string[],
): void {
  const proxy = 'proxy_pass http://upstream_pool;';
  const blocks = locations
    ? locations.map((regex) => `    location ~ ${regex} { ${proxy} }`).join('\n')
    : `    location / { ${proxy} }`;
  const server = `  upstream upstream_pool {
    server 127.0.0.1:${upstreamPort};
    keepalive 64;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${port};
    proxy_http_version 1.1;
    proxy_set_header Connection "";
${blocks}
  }`;
  writeFileSync(path.join(prefix, 'nginx.conf'), common(prefix, server));
}
