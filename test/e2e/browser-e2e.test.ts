import { readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { api, assertFieldError } from '../helpers/api.js';
import { browserUnavailable } from '../helpers/browser.js';
import {
  alive,
  pidsMentioning,
  startDebugChromium,
  startTestSite,
  type DebugChromium,
} from '../helpers/cdp-chromium.js';
import { removeHome, SLACK, startServer, waitFor, type RunningServer } from '../helpers/server.js';
import { skipFile } from '../helpers/skip.js';

/**
 * The browser connection end to end, against Debian's Chromium: status with no browser and its
 * reason, verify against a port nothing listens on and against a real DevTools port (saved in
 * config.yml), status connected with the version and tabs, and `launch: auto` starting a headless
 * Chromium of svc's own that is gone once svc stops.
 */

const browserMissing = browserUnavailable();

/** A port nothing listens on (bound, then closed). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

if (browserMissing) {
  skipFile(browserMissing);
} else {
  let server: RunningServer;
  let chrome: DebugChromium;
  let site: Awaited<ReturnType<typeof startTestSite>>;

  test.before(async () => {
    site = await startTestSite();
    chrome = await startDebugChromium(`${site.base}/`);
    server = await startServer();
  });

  test.after(async () => {
    await server?.stop();
    if (server) removeHome(server.home);
    await chrome?.stop();
    await site?.close();
  });

  test('with no browser configured, status says so and how to connect one', async () => {
    const r = await api(server.port, 'GET', '/api/browser/status');
    assert.is(r.status, 200);
    assert.is(r.body.configured, false);
    assert.is(r.body.connected, false);
    assert.match(r.body.reason, /--remote-debugging-port=9222/);
  });

  const devtoolsPort = { path: 'port', label: 'DevTools port' };
  test('verify refuses bad input with 400, and a remote endpoint unless allowed', async () => {
    const bad = await api(server.port, 'POST', '/api/browser/verify', { port: 'x' });
    assertFieldError(bad, devtoolsPort, /DevTools port: must be a number/);
    // What the Connection card's field lets through: named as the card labels it.
    assertFieldError(
      await api(server.port, 'POST', '/api/browser/verify', { port: 99999 }),
      devtoolsPort,
      /^Invalid browser connection: DevTools port: a port is a whole number from 1 to 65535\.$/,
    );
    const both = await api(server.port, 'POST', '/api/browser/verify', {
      port: 9222,
      cdp_url: 'http://127.0.0.1:9222',
    });
    assert.is(both.status, 400);
    const remote = await api(server.port, 'POST', '/api/browser/verify', {
      cdp_url: 'http://10.11.12.13:9222',
    });
    assert.is(remote.status, 200);
    assert.is(remote.body.ok, false);
    assert.match(remote.body.error, /not on this machine.*allow_remote/);
  });

  test('verify against a port nothing listens on says so, fast, and saves nothing', async () => {
    const port = await freePort();
    const r = await api(server.port, 'POST', '/api/browser/verify', { port, timeout_seconds: 3 });
    assert.is(r.status, 200, JSON.stringify(r.body));
    assert.is(r.body.ok, false);
    assert.is(r.body.saved, false);
    assert.is(
      r.body.error,
      `nothing listens on 127.0.0.1:${port}; start Chrome with --remote-debugging-port=${port}`,
    );
    assert.not.match(readConfig(), /browser:/);
  });

  test('verify against a port that accepts and never answers gives up within its bound, and says so', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((s) => sockets.add(s)); // takes the connection, never says a word
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    try {
      const started = Date.now();
      const r = await api(server.port, 'POST', '/api/browser/verify', { port, timeout_seconds: 1 });
      assert.is(r.status, 200, JSON.stringify(r.body));
      assert.is(r.body.ok, false);
      assert.is(r.body.saved, false);
      assert.match(r.body.error, new RegExp(`no answer from 127\\.0\\.0\\.1:${port} within 1 s`));
      assert.ok(Date.now() - started < 20_000 * SLACK, 'bounded');
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });

  test('verify against the real DevTools port answers the browser and its tabs, and saves the port', async () => {
    const r = await api(server.port, 'POST', '/api/browser/verify', { port: chrome.port });
    assert.is(r.status, 200, JSON.stringify(r.body));
    assert.is(r.body.ok, true, JSON.stringify(r.body));
    assert.match(r.body.browser, /Chrom/);
    assert.match(r.body.version, /^\d+\.\d+/);
    assert.ok(
      r.body.tabs.some(
        (t: { url: string; title: string }) => t.url === `${site.base}/` && t.title === 'Greeter',
      ),
      JSON.stringify(r.body.tabs),
    );
    assert.is(r.body.saved, true);
    assert.match(readConfig(), new RegExp(`browser:\\s+port: ${chrome.port}`));
  });

  test('status is then connected, with the version and the open tabs', async () => {
    const s = await waitFor(
      async () => {
        const r = await api(server.port, 'GET', '/api/browser/status');
        return r.body.connected ? r.body : undefined;
      },
      20_000,
      'status connected',
    );
    assert.is(s.configured, true);
    assert.is(s.mode, 'port');
    assert.is(s.endpoint, `127.0.0.1:${chrome.port}`);
    assert.match(s.version, /^\d+\.\d+/);
    assert.is(s.reason, null);
    assert.ok(
      s.tabs.some((t: { url: string }) => t.url === `${site.base}/`),
      JSON.stringify(s.tabs),
    );
  });

  test('a configured browser that goes away shows as disconnected with the reason', async () => {
    const port = await freePort();
    const r = await api(server.port, 'POST', '/api/browser/verify', { port: chrome.port });
    assert.is(r.body.ok, true);
    // Point the config at a dead port by hand, as a user editing config.yml would, then restart.
    const cfg = readConfig().replace(`port: ${chrome.port}`, `port: ${port}`);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(server.home, 'config.yml'), cfg, { mode: 0o600 });
    await server.stop();
    server = await startServer({ home: server.home });
    const s = (await api(server.port, 'GET', '/api/browser/status')).body;
    assert.is(s.connected, false);
    assert.is(
      s.reason,
      `nothing listens on 127.0.0.1:${port}; start Chrome with --remote-debugging-port=${port}`,
    );
  });

  test('launch: auto starts a headless Chromium of its own and none outlives svc', async () => {
    const own = await startServer({ config: 'browser:\n  launch: auto\n' });
    let pid = 0;
    try {
      let last = '';
      const s = await waitFor(
        async () => {
          const r = await api(own.port, 'GET', '/api/browser/status');
          last = JSON.stringify(r.body);
          return r.body.connected ? r.body : undefined;
        },
        60_000,
        'the launched browser connected',
      ).catch((err: Error) => {
        throw new Error(`${err.message}; last status: ${last}`);
      });
      assert.is(s.mode, 'launch');
      assert.ok(Number.isInteger(s.launched_pid) && s.launched_pid > 0);
      pid = s.launched_pid;
      assert.ok(alive(pid));
      assert.match(s.browser, /Chrom/);
      assert.ok(
        pidsMentioning(join(own.home, 'browser', 'profile')).length >= 1,
        'its processes use the profile under $SVC_HOME/browser/',
      );
    } finally {
      await own.stop();
    }
    await waitFor(() => !alive(pid), 15_000, 'the launched Chromium to be gone');
    await waitFor(
      () => pidsMentioning(join(own.home, 'browser', 'profile')).length === 0,
      15_000,
      'no Chromium helper left',
    );
    removeHome(own.home);
  });

  test('launch: auto: a browser worker killed outright takes its Chromium with it; the next one starts a new one', async () => {
    const own = await startServer({ config: 'browser:\n  launch: auto\n' });
    const profile = join(own.home, 'browser', 'profile');
    try {
      const first = await waitFor(
        async () => {
          const r = await api(own.port, 'GET', '/api/browser/status');
          return r.body.connected ? r.body : undefined;
        },
        40_000,
        'the launched browser connected',
      );
      const worker = (await api(own.port, 'GET', '/api/status')).body.processes.find(
        (p: { role: string }) => p.role === 'browser',
      );
      assert.ok(worker && worker.pid > 0);
      process.kill(worker.pid, 'SIGKILL');
      await waitFor(
        () => !alive(first.launched_pid),
        15_000,
        'the Chromium of the killed worker to be gone',
      );
      const second = await waitFor(
        async () => {
          const r = await api(own.port, 'GET', '/api/browser/status');
          if (r.body.connected && r.body.launched_pid !== first.launched_pid) return r.body;
          // What the status said last is in the message if the wait runs out.
          throw new Error(`the status says ${JSON.stringify(r.body)}`);
        },
        60_000,
        'a new worker with a new Chromium',
      );
      assert.ok(alive(second.launched_pid));
    } finally {
      await own.stop();
    }
    await waitFor(() => pidsMentioning(profile).length === 0, 15_000, 'no Chromium left');
    removeHome(own.home);
  });

  function readConfig(): string {
    try {
      return readFileSync(join(server.home, 'config.yml'), 'utf8');
    } catch {
      return '';
    }
  }
}

test.run();
