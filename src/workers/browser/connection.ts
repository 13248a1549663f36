import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { browserConfigured, type BrowserConfig } from '../../shared/config/browser.js';
import {
  cdpEndpoint,
  remoteRefusal,
  type CdpEndpoint,
  type CdpTarget,
} from '../../shared/browser/endpoint.js';
import { log } from '../../shared/log.js';
import type { BrowserStatus } from '../../shared/protocol/browser.js';
import { findBrowser, launchChromium, type Launched } from './launch.js';

export interface Tab {
  index: number;
  url: string;
  title: string;
  active: boolean;
}

export const CONNECT_TIMEOUT_MS = 5000;

/** A failure to reach a DevTools endpoint, in words with the fix. */
export function connectError(err: unknown, ep: CdpEndpoint, timeoutMs: number): string {
  const m = err instanceof Error ? err.message : String(err);
  const port = ep.hostPort.split(':').pop();
  if (/ECONNREFUSED/.test(m))
    return `nothing listens on ${ep.hostPort}; start Chrome with --remote-debugging-port=${port}`;
  if (/timeout|timed out/i.test(m))
    return `no answer from ${ep.hostPort} within ${timeoutMs / 1000} s; is it a browser's DevTools port (--remote-debugging-port=${port})?`;
  if (/ENOTFOUND|EAI_AGAIN/.test(m)) return `the host of ${ep.url} cannot be resolved`;
  return `${ep.hostPort} did not answer as a DevTools endpoint: ${m.split('\n')[0]}`;
}

/** connectOverCDP within a bound of our own too (a port that accepts and never answers). */
async function connect(ep: CdpEndpoint, timeoutMs: number): Promise<Browser> {
  let timer: NodeJS.Timeout | undefined;
  const attempt = chromium.connectOverCDP(ep.url, { timeout: timeoutMs });
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), timeoutMs + 500);
  });
  try {
    return await Promise.race([attempt, bound]);
  } catch (err) {
    void attempt.then((b) => b.close()).catch(() => {}); // a late success is closed, not leaked
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** The browser's product name and version ("HeadlessChrome", "142.0…"), through a CDP session. */
async function identify(b: Browser): Promise<{ name: string; version: string }> {
  const s = await b.newBrowserCDPSession();
  try {
    const v = (await s.send('Browser.getVersion')) as { product?: string };
    const [name, version] = (v.product ?? '').split('/');
    return { name: name || 'Chromium', version: version || b.version() };
  } finally {
    await s.detach().catch(() => {});
  }
}

function pagesOf(b: Browser): Page[] {
  return b.contexts().flatMap((c) => c.pages());
}

/**
 * The one connection to the configured browser, shared by every agent worker: connects lazily
 * and again after a drop, starts (and stops) svc's own Chromium under `launch: auto`, and keeps
 * which tab the agent works in.
 */
export class BrowserLink {
  private config: BrowserConfig = { allow_remote: false };
  private browser: Browser | null = null;
  private launched: Launched | null = null;
  private connecting: Promise<Browser> | null = null;
  private lastError: string | null = null;
  private current: Page | null = null;

  constructor(
    private readonly home: string,
    private readonly onGroup: (pgid: number | null) => void,
  ) {}

  /** A new config: a changed endpoint drops the connection (and svc's own browser when launch goes). */
  async apply(next: BrowserConfig): Promise<void> {
    const same =
      next.cdp_url === this.config.cdp_url &&
      next.port === this.config.port &&
      next.launch === this.config.launch &&
      next.executable === this.config.executable;
    this.config = next;
    if (same) return;
    await this.disconnect();
    if (next.launch !== 'auto') await this.stopLaunched();
    this.lastError = null;
    if (next.launch === 'auto') void this.ensure().catch(() => {}); // start it now: the status then says how it went
  }

  private endpoint(): CdpEndpoint | null {
    if (this.config.launch === 'auto')
      return this.launched ? cdpEndpoint({ port: this.launched.port }) : null;
    return cdpEndpoint(this.config);
  }

  /** The connected browser, connecting (and launching) first when needed. */
  async ensure(timeoutMs = CONNECT_TIMEOUT_MS): Promise<Browser> {
    if (this.browser?.isConnected()) return this.browser;
    this.connecting ??= this.open(timeoutMs).finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async open(timeoutMs: number): Promise<Browser> {
    if (!browserConfigured(this.config)) throw new Error('no browser is configured');
    if (this.config.launch === 'auto' && !this.launched) {
      const exe = findBrowser(this.config.executable);
      if (!exe)
        throw this.fail(
          this.config.executable
            ? `${this.config.executable} does not exist; fix browser.executable in config.yml`
            : 'launch: auto found no Chromium or Chrome on this machine; install one (apt-get install chromium) or set browser.executable',
        );
      try {
        const l = await launchChromium(exe, join(this.home, 'browser', 'profile'), this.onGroup);
        this.launched = l;
        log.info('started a headless browser for the agent', { pid: l.pid, port: l.port });
        void l.exited.then(() => {
          if (this.launched === l) this.launched = null;
        });
      } catch (err) {
        throw this.fail((err as Error).message);
      }
    }
    const ep = this.endpoint()!;
    if (!ep.loopback && !this.config.allow_remote) throw this.fail(remoteRefusal(ep));
    try {
      const b = await connect(ep, timeoutMs);
      this.browser = b;
      this.lastError = null;
      b.on('disconnected', () => {
        if (this.browser === b) {
          this.browser = null;
          this.current = null;
          this.lastError = `the browser at ${ep.hostPort} closed the connection`;
        }
      });
      return b;
    } catch (err) {
      throw this.fail(connectError(err, ep, timeoutMs));
    }
  }

  private fail(message: string): Error {
    this.lastError = message;
    return new Error(message);
  }

  async status(): Promise<BrowserStatus> {
    const mode = this.config.launch
      ? 'launch'
      : this.config.cdp_url !== undefined
        ? 'cdp_url'
        : this.config.port !== undefined
          ? 'port'
          : null;
    const base: BrowserStatus = {
      configured: browserConfigured(this.config),
      connected: false,
      endpoint: this.endpoint()?.hostPort ?? null,
      mode,
      browser: null,
      version: null,
      tabs: [],
      reason: null,
      launched_pid: this.launched?.pid ?? null,
    };
    if (!base.configured)
      return {
        ...base,
        reason:
          'No browser is configured: set browser.port (a Chrome started with --remote-debugging-port) or browser.launch: auto in config.yml, or verify a port.',
      };
    try {
      const b = await this.ensure();
      const id = await identify(b);
      return {
        ...base,
        endpoint: this.endpoint()?.hostPort ?? null,
        launched_pid: this.launched?.pid ?? null,
        connected: true,
        browser: id.name,
        version: id.version,
        tabs: await this.tabs(),
      };
    } catch (err) {
      return {
        ...base,
        launched_pid: this.launched?.pid ?? null,
        reason: this.lastError ?? (err as Error).message,
      };
    }
  }

  /** Connects to `target` (or the configured browser) within the bound, reads what it is, and lets go. */
  async verify(
    target: CdpTarget,
    timeoutMs: number,
  ): Promise<{
    ok: boolean;
    endpoint: string;
    browser?: string;
    version?: string;
    tabs?: Tab[];
    error?: string;
  }> {
    const ep =
      target.cdp_url !== undefined || target.port !== undefined ? cdpEndpoint(target) : null;
    if (!ep) {
      try {
        const b = await this.ensure(timeoutMs);
        const id = await identify(b);
        return {
          ok: true,
          endpoint: this.endpoint()?.hostPort ?? '',
          browser: id.name,
          version: id.version,
          tabs: await this.tabs(),
        };
      } catch (err) {
        return {
          ok: false,
          endpoint: this.endpoint()?.hostPort ?? 'none',
          error: (err as Error).message,
        };
      }
    }
    if (!ep.loopback && !this.config.allow_remote)
      return { ok: false, endpoint: ep.hostPort, error: remoteRefusal(ep) };
    let b: Browser;
    try {
      b = await connect(ep, timeoutMs);
    } catch (err) {
      return { ok: false, endpoint: ep.hostPort, error: connectError(err, ep, timeoutMs) };
    }
    try {
      const id = await identify(b);
      const tabs = pagesOf(b).map((p, index) => ({
        index,
        url: p.url(),
        title: '',
        active: false,
      }));
      for (const [i, p] of pagesOf(b).entries()) tabs[i]!.title = await p.title().catch(() => '');
      return { ok: true, endpoint: ep.hostPort, browser: id.name, version: id.version, tabs };
    } finally {
      await b.close().catch(() => {}); // disconnects; a browser svc did not start keeps running
    }
  }

  async tabs(): Promise<Tab[]> {
    const b = this.browser;
    if (!b) return [];
    const pages = pagesOf(b);
    const active = this.current && pages.includes(this.current) ? this.current : pages[0];
    return Promise.all(
      pages.map(async (p, index) => ({
        index,
        url: p.url(),
        title: await p.title().catch(() => ''),
        active: p === active,
      })),
    );
  }

  /** The agent's tab when connected, without connecting (for saying what a failed step's page showed). */
  pageIfConnected(): Page | null {
    return this.browser?.isConnected() && this.current && !this.current.isClosed()
      ? this.current
      : null;
  }

  /** The tab the agent works in: the one it selected, else the first, else a new one. */
  async page(): Promise<Page> {
    const b = await this.ensure();
    const pages = pagesOf(b);
    if (this.current && pages.includes(this.current) && !this.current.isClosed())
      return this.current;
    this.current = pages[0] ?? (await (b.contexts()[0] ?? (await b.newContext())).newPage());
    return this.current;
  }

  async openTab(url?: string): Promise<Page> {
    const b = await this.ensure();
    const context = b.contexts()[0] ?? (await b.newContext());
    const p = await context.newPage();
    if (url) await p.goto(url, { waitUntil: 'domcontentloaded', timeout: 30_000 });
    this.current = p;
    return p;
  }

  async selectTab(index: number): Promise<Page> {
    const b = await this.ensure();
    const p = pagesOf(b)[index];
    if (!p) throw new Error(`there is no tab ${index}; tabs list shows them`);
    await p.bringToFront().catch(() => {});
    this.current = p;
    return p;
  }

  async closeTab(index: number): Promise<void> {
    const b = await this.ensure();
    const p = pagesOf(b)[index];
    if (!p) throw new Error(`there is no tab ${index}; tabs list shows them`);
    await p.close();
    if (this.current === p) this.current = null;
  }

  private async disconnect(): Promise<void> {
    const b = this.browser;
    this.browser = null;
    this.current = null;
    if (b) await b.close().catch(() => {});
  }

  private async stopLaunched(): Promise<void> {
    const l = this.launched;
    this.launched = null;
    if (l) await l.stop();
  }

  /** At process exit (no time for anything else): SIGKILL to svc's own browser's process group. */
  killNow(): void {
    if (!this.launched) return;
    try {
      process.kill(-this.launched.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  /** Lets go of the connection and ends svc's own browser. */
  async close(): Promise<void> {
    await this.disconnect();
    await this.stopLaunched();
  }
}
