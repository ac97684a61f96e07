import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * An rsyslogd of the test's own (the shared one is never stopped): its own config, work directory,
 * pidfile and TCP port on 127.0.0.1, in the foreground (`-n`) so that the test can stop it with
 * SIGTERM and start it again, as a daemon restart. Each message is one RFC 5424 line in `file`.
 */
export async function privateRsyslogd() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-rsyslogd-'));
  const port = await freePort();
  const file = path.join(dir, 'received.log');
  const conf = path.join(dir, 'rsyslog.conf');
  writeFileSync(
    conf,
    `global(workDirectory="${dir}" maxMessageSize="64k" net.enableDNS="off")
module(load="imtcp")
ruleset(name="remote") { action(type="omfile" file="${file}" template="RSYSLOG_SyslogProtocol23Format") }
input(type="imtcp" address="127.0.0.1" port="${port}" ruleset="remote")
`,
  );
  writeFileSync(file, '');
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('rsyslogd', ['-n', '-f', conf, '-i', path.join(dir, 'rsyslogd.pid')], { stdio: 'ignore' });
    for (let i = 0; i < 100 && !(await listening(port)); i++) await new Promise((r) => setTimeout(r, 50));
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill('SIGTERM');
    });
  };
  await start();
  return { port, file, start, stop };
}
