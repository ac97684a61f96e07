import { readFileSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { serviceExecutable } from '@portico/test-support';
import { type Browser, type CDPSession, chromium, type Page } from 'playwright-core';
import { childrenOf, processAlive } from './gateway.ts';
import { waitFor } from './http.ts';

/**
 * The flags `test-e2e/services/chromium.sh` checks Chromium with, and no name resolution. Two of
 * its flags are playwright's to give: `--headless` (its `headless` option, the default) and `--user-data-dir`: each launch gets a
 * temporary profile of its own, deleted when the browser closes.
 */
export const CHROMIUM_FLAGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
  '--disable-quic',
  // Loopback only: a name (the provider's pages import a web font) fails at once, never waits on
  // a network the tests must not use.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost',
];

/**
 * Chromium as `test-e2e/services/chromium.sh` installed it (`PORTICO_CHROMIUM`, from the
 * environment or the services' env.json), or undefined: the suite is skipped with one line saying
 * so, except under CI, where this throws.
 */
export function chromiumPath(): string | undefined {
  return serviceExecutable('PORTICO_CHROMIUM', 'Chromium');
}

/** A headless Chromium driven by playwright-core, one per test file. */
export interface RunningBrowser {
  readonly browser: Browser;
  /** The browser's main process (the leader of its process group). */
  readonly pid: number;
  /** Its temporary profile directory. */
  readonly profile: string;
  /**
   * A page in a new browser context: a fresh profile of its own (no cookie, storage or cache of
   * any other page), closed with the page. Waits at most 10 s for anything, so that a flow stuck
   * on a page fails the test with playwright's account of it rather than by the test's timeout.
   */
  newPage(): Promise<Page>;
  /** Closes the browser; if it has not gone within 10 s, kills its process group. Idempotent. */
  close(): Promise<void>;
}

const PROFILE_FLAG = '--user-data-dir=';

export async function launchBrowser(executablePath: string): Promise<RunningBrowser> {
  const before = new Set(childrenOf(process.pid));
  const browser = await chromium.launch({ executablePath, headless: true, args: [...CHROMIUM_FLAGS] });
  // Playwright starts the browser as a child of this process, detached (a process group of its
  // own), with its temporary profile on the command line.
  const launched = childrenOf(process.pid)
    .filter((pid) => !before.has(pid))
    .map((pid) => ({ pid, args: commandLine(pid) }))
    .find(({ args }) => args.includes('--remote-debugging-pipe'));
  const profile = launched?.args.find((arg) => arg.startsWith(PROFILE_FLAG))?.slice(PROFILE_FLAG.length);
  if (launched === undefined || profile === undefined) {
    await browser.close();
    throw new Error('the browser playwright launched is not among the children of this process');
  }
  const { pid } = launched;
  let closing: Promise<void> | undefined;
  return {
    browser,
    pid,
    profile,
    async newPage() {
      const page = await browser.newPage();
      page.setDefaultTimeout(10_000);
      page.setDefaultNavigationTimeout(10_000);
      return page;
    },
    close() {
      closing ??= (async () => {
        await Promise.race([browser.close().catch(() => {}), sleep(10_000)]);
        if (processAlive(pid)) {
          try {
            process.kill(-pid, 'SIGKILL');
          } catch {
            // Gone in between.
          }
        }
        await waitFor('the browser process to end', () => !processAlive(pid));
        rmSync(profile, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}

function commandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

/** Where a page is and what it shows, for assertion messages: its URL and the start of its text. */
export async function pageState(page: Page): Promise<string> {
  const text = await page
    .locator('body')
    // biome-ignore lint/performance/useDomNodeTextContent: playwright's, the text as shown, blocks apart
    .innerText({ timeout: 1000 })
    .catch(() => null);
  return `${page.url()}: ${text === null ? '(no body)' : text.replace(/\s+/g, ' ').trim().slice(0, 300)}`;
}

/**
 * Stops the page's next request to a URL matching `urlPattern` (CDP wildcards: `*` any characters)
 * before it leaves the browser, and resolves with that URL. Unlike `page.route`, this also stops a
 * request a redirect makes: the way to keep a provider's redirect to a callback from arriving,
 * and to send the browser there with the URL altered instead.
 */
export async function holdNextRequest(page: Page, urlPattern: string): Promise<{ url: Promise<string> }> {
  const cdp: CDPSession = await page.context().newCDPSession(page);
  await cdp.send('Fetch.enable', { patterns: [{ urlPattern, requestStage: 'Request' }] });
  const url = new Promise<string>((resolve, reject) => {
    cdp.once('Fetch.requestPaused', ({ requestId, request }) => {
      cdp
        .send('Fetch.failRequest', { requestId, errorReason: 'Aborted' })
        .then(() => cdp.detach())
        .then(() => resolve(request.url), reject);
    });
  });
  return { url };
}
