import { mkdtempSync, readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { json, send } from '../support/http.ts';
import { porticoBin } from '../support/portico.ts';

/**
 * `npx portico start` on a machine with no instance directory ($HOME/.portico absent, PORTICO_BASE
 * unset): the embedded quickstart configuration and its sample application.
 */
describe('portico start with no instance directory (the quickstart)', () => {
  let gw: RunningGateway;
  const home = mkdtempSync(path.join(os.tmpdir(), 'portico-home-'));

  beforeAll(async () => {
    gw = await startGateway({ env: { HOME: home, PORTICO_BASE: undefined } });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
  });

  it('is what `npx portico` runs', () => {
    const bin = path.resolve(path.dirname(porticoBin), '../../../node_modules/.bin/portico');
    expect(path.resolve(path.dirname(bin), readlinkSync(bin))).toBe(
      path.resolve(path.dirname(bin), '../@portico/gateway/bin/portico.js'),
    );
  });

  it('says it serves the embedded quickstart and where', () => {
    expect(gw.output()).toContain('Quickstart (embedded configuration');
    expect(gw.output()).toContain(`${gw.url}/app/hello`);
  });

  it('serves the welcome page at /', async () => {
    const reply = await send(`${gw.url}/`);
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('text/html; charset=UTF-8');
    expect(reply.text).toContain('Portico is running');
    expect(reply.text).toContain('You called from 127.0.0.1');
  });

  it('proxies /app/hello to the sample application', async () => {
    const reply = await send(`${gw.url}/app/hello?name=e2e`, { method: 'POST', body: 'hi there' });
    expect(reply.status).toBe(200);
    const echo = JSON.parse(reply.text);
    expect(echo).toMatchObject({
      application: 'Portico quickstart sample application',
      method: 'POST',
      url: '/app/hello?name=e2e',
      body: 'hi there',
    });
    expect(echo.headers['x-forwarded-for']).toContain('127.0.0.1');
  });

  it('serves /static.json', async () => {
    const reply = await json(`${gw.url}/static.json`);
    expect(reply).toEqual({
      status: 200,
      body: { message: 'a static route', method: 'GET', path: '/static.json' },
    });
  });

  it('has the administrative endpoints and the default 404', async () => {
    expect((await json(`${gw.url}/openig/ping`)).body).toEqual({ status: 'ok' });
    const info = await json(`${gw.url}/openig/api/info`);
    expect(info.body.instance).toBe('(embedded quickstart)');
    const routes = await json(`${gw.url}/openig/api/routes`);
    expect(routes.body.routers[0].routes.map((r: { name: string }) => r.name)).toEqual([
      '00-welcome',
      '10-app',
      '20-static',
    ]);
    expect((await send(`${gw.url}/no/such/page`)).status).toBe(404);
  });
});

describe('portico start with PORTICO_BASE set but empty', () => {
  it('counts it as unset and serves the quickstart (not the current directory)', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'portico-home-'));
    const gw = await startGateway({ env: { HOME: home, PORTICO_BASE: '' } });
    try {
      expect((await json(`${gw.url}/openig/api/info`)).body.instance).toBe('(embedded quickstart)');
      expect((await send(`${gw.url}/static.json`)).status).toBe(200);
    } finally {
      expect(await gw.stop()).toBe(0);
    }
  });
});
