import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPath, launchBrowser, type RunningBrowser } from '../support/browser.ts';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';

const chromium = chromiumPath();

/** The width and height a PNG says it has (its IHDR chunk). */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/**
 * The read-only routes page (`/openig/routes`, issue 43) in a headless Chromium against the real
 * `portico start`: it loads, lists the routes with their chains drawn as boxes, and its counters
 * follow the requests the gateway serves; its screenshots are checked for size and for changing
 * when the counters do.
 */
describe.runIf(chromium)('the routes page in a headless Chromium', () => {
  let gw: RunningGateway;
  let browser: RunningBrowser;

  beforeAll(async () => {
    [gw, browser] = await Promise.all([
      startGateway({
        base: instanceDirectory({
          'config/routes/10-api.json': {
            name: '10-api',
            condition: "${matches(request.uri.path, '^/api')}",
            handler: {
              type: 'Chain',
              config: {
                filters: [
                  {
                    name: 'AddHeader',
                    type: 'HeaderFilter',
                    config: { messageType: 'RESPONSE', add: { 'X-A': ['1'] } },
                  },
                  { type: 'HeaderFilter', config: { messageType: 'REQUEST', remove: ['Cookie'] } },
                ],
                handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'api' } },
              },
            },
          },
          'config/routes/20-rest.json': {
            name: '20-rest',
            handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'rest' } },
          },
        }),
        env: { NODE_OPTIONS: '--conditions=portico-source' },
      }),
      launchBrowser(chromium!),
    ]);
  });

  afterAll(async () => {
    await browser?.close();
    expect(await gw?.stop()).toBe(0);
  });

  it('lists the routes with their chains, and its counters follow the traffic', async () => {
    const page = await browser.newPage();
    await page.setViewportSize({ width: 1200, height: 400 });
    await page.goto(`${gw.url}/openig/routes`);
    await expect.poll(() => page.locator('#routes tr').count()).toBe(2);
    expect(await page.title()).toBe('Portico routes');
    const api = page.locator('tr[data-route="10-api"]');
    expect(await api.locator('.box').allTextContents()).toEqual([
      'AddHeader',
      'HeaderFilter',
      'StaticResponseHandler',
    ]);
    expect(await page.locator('tr[data-route="20-rest"] .box').allTextContents()).toEqual([
      'StaticResponseHandler',
    ]);
    expect(await api.locator('td').nth(3).textContent()).toBe('DEPLOYED');
    const requests = api.locator('.ig_route_request_total');
    const before = Number(await requests.textContent());
    const first = await page.screenshot();
    expect(pngSize(first)).toEqual({ width: 1200, height: 400 });

    for (let i = 0; i < 7; i++) expect((await send(`${gw.url}/api/x`)).text).toBe('api');
    await expect.poll(async () => Number(await requests.textContent()), { timeout: 8000 }).toBe(before + 7);
    expect(await page.locator('tr[data-route="20-rest"] .ig_route_request_total').textContent()).toBe('0');
    const second = await page.screenshot();
    expect(pngSize(second)).toEqual({ width: 1200, height: 400 });
    // The counters (and the time it was updated) changed, so the picture did.
    expect(second.equals(first)).toBe(false);
  });

  it('is served with a content security policy that lets nothing from elsewhere in', async () => {
    const reply = await send(`${gw.url}/openig/routes`);
    expect(reply.status).toBe(200);
    expect(reply.headers['content-security-policy']).toContain("default-src 'none'");
  });
});
