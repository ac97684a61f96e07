import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { raw, send } from '../support/http.ts';

/** CPU time the process has used (user and system), in clock ticks, from /proc. */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * Percent-escapes that do not decode cost no more than ones that do: a path, query or form field
 * full of `%FF` (not UTF-8) was decoded escape by escape, each failure an exception, which made a
 * 16 KB path cost 60–80 ms of CPU per request (30–50 times a path of plain letters) and a 1 MB form
 * 1 s. Measured as the gateway's own CPU time for the hostile requests against the same number of
 * well-formed ones of the same size, in the same run: a ratio, whatever the machine's speed.
 */
describe('malformed percent-escapes from a client, through portico start', () => {
  let gw: RunningGateway;

  beforeAll(async () => {
    const base = instanceDirectory({
      'config/routes/10-form.json': {
        name: '10-form',
        condition: "${request.uri.path == '/form'}",
        handler: {
          type: 'StaticResponseHandler',
          config: { status: 200, entity: "fields: ${request.form['a'].size()}" },
        },
      },
      'config/routes/99-rest.json': {
        name: '99-rest',
        handler: {
          type: 'StaticResponseHandler',
          config: { status: 200, entity: 'path: ${request.uri.path}' },
        },
      },
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
  });

  /** The gateway's CPU ticks for `count` runs of `request`. */
  async function ticksFor(count: number, request: () => Promise<unknown>): Promise<number> {
    const before = cpuTicks(gw.process.pid!);
    for (let i = 0; i < count; i++) await request();
    return cpuTicks(gw.process.pid!) - before;
  }

  it('a 16 KB path of escapes that are not UTF-8 costs about what a path of letters does', async () => {
    const get = (path: string) => async () => {
      const reply = await raw(gw.url, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(reply.status).toBe(200);
    };
    const hostile = `/${'%FFa'.repeat(3900)}`;
    const letters = `/${'abcd'.repeat(3900)}`;
    const reply = await raw(gw.url, `GET ${hostile}%41 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(reply.text).toContain(`path: /${'%FFa'.repeat(3900)}A`);
    const plain = await ticksFor(100, get(letters));
    const malformed = await ticksFor(100, get(hostile));
    expect(malformed).toBeLessThan(4 * plain + 30);
  });

  it('a 1 MB form of fields that do not decode costs about what one of fields that do does', async () => {
    const post = (body: string) => async () => {
      const reply = await send(`${gw.url}/form`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body,
      });
      expect(reply.text).toBe(`fields: ${body.length / 6}`);
    };
    const wellFormed = 'a=%41&'.repeat(170_000);
    const malformed = 'a=%FF&'.repeat(170_000);
    const decoded = await ticksFor(5, post(wellFormed));
    const refused = await ticksFor(5, post(malformed));
    expect(refused).toBeLessThan(4 * decoded + 30);
  });
});
