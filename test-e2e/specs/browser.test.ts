import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPath, launchBrowser, pageState, type RunningBrowser } from '../support/browser.ts';
import { instanceDirectory, processAlive, type RunningGateway, startGateway } from '../support/gateway.ts';
import { chainRoute } from '../support/routes.ts';

const chromium = chromiumPath();

const html = (status: number, entity: string) => ({
  type: 'StaticResponseHandler',
  config: { status, headers: { 'Content-Type': ['text/html; charset=UTF-8'] }, entity },
});

/**
 * The browser harness the browser flows use (support/browser.ts): a headless Chromium, launched by
 * playwright-core from `PORTICO_CHROMIUM`, fills a form the real `portico start` serves, follows
 * its redirect and keeps its session cookie; a new page starts from a fresh profile; closing the
 * browser ends its processes and deletes its profile.
 */
describe.runIf(chromium)('a headless Chromium against portico start', () => {
  let gw: RunningGateway;
  let browser: RunningBrowser;

  beforeAll(async () => {
    [gw, browser] = await Promise.all([
      startGateway({
        base: instanceDirectory({
          'config/routes/form.json': {
            condition: "${request.uri.path == '/form'}",
            handler: html(
              200,
              '<form method="post" action="/greet"><label>Name <input name="who"></label><button>Send</button></form>',
            ),
          },
          'config/routes/greet.json': chainRoute(
            "${request.uri.path == '/greet' and request.method == 'POST'}",
            [
              {
                type: 'AssignmentFilter',
                config: { onRequest: [{ target: '${session.who}', value: "${request.form['who'][0]}" }] },
              },
            ],
            {
              handler: {
                type: 'StaticResponseHandler',
                config: { status: 302, headers: { Location: ['/hello'] } },
              },
            },
          ),
          'config/routes/hello.json': {
            condition: "${request.uri.path == '/hello'}",
            handler: html(200, "<h1>Hello ${empty session.who ? 'nobody' : session.who}</h1>"),
          },
        }),
      }),
      launchBrowser(chromium!),
    ]);
  });

  afterAll(async () => {
    await browser?.close();
    expect(await gw?.stop()).toBe(0);
  });

  it('fills and sends a form, follows the redirect, and keeps the session cookie', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${gw.url}/form`);
      await page.getByLabel('Name').fill('Ada');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.waitForURL(`${gw.url}/hello`);
      expect(await page.locator('h1').textContent(), await pageState(page)).toBe('Hello Ada');
      await page.reload();
      expect(await page.locator('h1').textContent()).toBe('Hello Ada');
    } finally {
      await page.close();
    }
  });

  it('a new page has a fresh profile: no cookie of an earlier one', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${gw.url}/hello`);
      expect(await page.locator('h1').textContent()).toBe('Hello nobody');
      expect(await page.context().cookies()).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('closing ends the browser process and deletes its profile', async () => {
    expect(processAlive(browser.pid)).toBe(true);
    expect(existsSync(browser.profile)).toBe(true);
    await browser.close();
    expect(processAlive(browser.pid)).toBe(false);
    expect(existsSync(browser.profile)).toBe(false);
  });
});
