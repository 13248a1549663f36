import type { Browser } from 'playwright-core';
import { chromium } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  browserUnavailable,
  CHROMIUM,
  CHROMIUM_ARGS,
  launch,
  newPage,
} from '../helpers/browser.js';
import { createNetns, netnsUnavailable, type Netns } from '../helpers/netns.js';
import { http, removeHome, startServer, type RunningServer } from '../helpers/server.js';
import { skipFile } from '../helpers/skip.js';

/*
 * A visitor the server does not trust without the key. As root, the browser runs inside a
 * network namespace and reaches the server from a real non-loopback address; otherwise it
 * reaches 127.0.0.1 under a foreign host name (so its Host header is not local), which the
 * server treats the same way. Either way: a clear key prompt (never a broken page), a wrong key
 * said so, and the key traded for an HttpOnly cookie and gone from the address bar.
 */

const browserMissing = browserUnavailable();
const nsMissing =
  process.env.SVC_WEB_NO_NETNS === '1'
    ? 'SVC_WEB_NO_NETNS=1 asks for the other way'
    : netnsUnavailable();

let ns: Netns | undefined;
let server: RunningServer | undefined;
let origin = '';
let key = '';
/** Why a signed-in remote page cannot be fully used (checked before the tests are registered). */
let sameOriginRefused: string | undefined;

if (!browserMissing) {
  if (nsMissing === undefined) {
    ns = createNetns();
    server = await startServer({
      args: ['--addr', `${ns.hostIp}:0`],
      env: { SVC_ACCESS_KEY: undefined },
    });
    origin = `http://${ns.hostIp}:${server.port}`;
  } else {
    console.log(
      `the browser is not in a network namespace (${nsMissing}); it visits 127.0.0.1 as svc.example instead`,
    );
    server = await startServer({ env: { SVC_ACCESS_KEY: undefined } });
    origin = `http://svc.example:${server.port}`;
  }
  key = server.key();
  // What the page's own requests carry: its origin, and the key (as the cookie would).
  const probe = await http({
    port: server.port,
    host: ns ? ns.hostIp : '127.0.0.1',
    method: 'POST',
    path: '/api/sessions',
    headers: {
      Host: new URL(origin).host,
      Origin: origin,
      Authorization: `Bearer ${key}`,
      'Content-Type': 'application/json',
    },
    body: '{}',
  });
  if (probe.status === 403)
    sameOriginRefused = `the gateway refuses the page's own origin ${origin} (403 ${probe.text.slice(0, 160)}): same-origin requests need to be allowed (src/gateway/auth.ts)`;
}

if (browserMissing) {
  skipFile(browserMissing);
} else {
  let browser: Browser;

  test.before(async () => {
    browser = ns
      ? await launch({ netns: ns.name, home: server!.home })
      : await chromium.launch({
          executablePath: CHROMIUM,
          args: [...CHROMIUM_ARGS, '--host-resolver-rules=MAP svc.example 127.0.0.1'],
        });
  });

  test.after(async () => {
    await browser?.close().catch(() => undefined);
    await server?.stop();
    if (server) removeHome(server.home);
    ns?.close();
  });

  test('a visitor without the key gets the key prompt, not a broken page', async () => {
    const p = await newPage(browser);
    try {
      await p.page.goto(origin + '/');
      const prompt = p.page.getByTestId('access-prompt');
      await prompt.waitFor();
      assert.match(await prompt.innerText(), /access key/i);
      assert.is(
        await p.page.getByTestId('onboarding').count(),
        0,
        'nothing behind the prompt shows',
      );
      assert.equal(p.errors, []);
    } finally {
      await p.close();
    }
  });

  test('a wrong key is refused and said so; the key never stays in the address bar', async () => {
    const p = await newPage(browser);
    try {
      await p.page.goto(origin + '/');
      await p.page.locator('input[name=access_key]').fill('not-the-key-0123456789');
      await p.page.getByRole('button', { name: 'Unlock' }).click();
      await p.page.getByText('That key was not accepted').waitFor();
      assert.is(p.page.url(), origin + '/', 'no key and no marker left in the address');
      assert.equal(await p.context.cookies(), [], 'no cookie for a wrong key');
    } finally {
      await p.close();
    }
  });

  test('the right key through the prompt: an HttpOnly cookie, a clean address, and the app', async () => {
    const p = await newPage(browser);
    try {
      await p.page.goto(origin + '/');
      await p.page.locator('input[name=access_key]').fill(key);
      await p.page.getByRole('button', { name: 'Unlock' }).click();
      await p.page.getByTestId('onboarding').waitFor();
      assert.not.match(p.page.url(), /access_key/);
      assert.not.ok(p.page.url().includes(key), 'the key is not in the address');
      const cookies = await p.context.cookies();
      const c = cookies.find((x) => x.name === 'svc_access_key');
      assert.ok(c, JSON.stringify(cookies));
      assert.is(c!.httpOnly, true);
      assert.is(c!.sameSite, 'Strict');
      assert.is(await p.page.evaluate('document.cookie'), '', 'the page cannot read the key');
      assert.is(
        await p.page.evaluate('JSON.stringify(localStorage).includes(' + JSON.stringify(key) + ')'),
        false,
        'the key is not stored by the page',
      );
    } finally {
      await p.close();
    }
  });

  test('opening the printed address /?access_key=KEY lands on a clean address, signed in', async () => {
    const p = await newPage(browser);
    try {
      await p.page.goto(`${origin}/favicon.svg`);
      await p.page.goto(`${origin}/?access_key=${encodeURIComponent(key)}`);
      await p.page.getByTestId('onboarding').waitFor();
      assert.is(p.page.url(), origin + '/#/onboarding');
      // The providers list comes from an authenticated route: the cookie works.
      await p.page.locator('select[name=provider] option').first().waitFor({ state: 'attached' });
      await p.page.goBack();
      assert.is(
        p.page.url(),
        `${origin}/favicon.svg`,
        'the address with the key is not in the history either',
      );
    } finally {
      await p.close();
    }
  });

  test("the page's own origin is accepted (its writes and its WebSocket carry that Origin)", () => {
    assert.is(sameOriginRefused, undefined, sameOriginRefused);
  });

  test('signed in from afar, the page is fully usable: the live connection comes up and changes go through', async () => {
    const p = await newPage(browser);
    try {
      await p.page.goto(`${origin}/?access_key=${encodeURIComponent(key)}`);
      await p.page.getByTestId('onboarding').waitFor();
      await p.page.getByRole('button', { name: 'Skip setup for now' }).click();
      await p.page.getByTestId('composer-input').waitFor();
      // Online: no connection banner once the WebSocket (same origin, cookie) is up.
      await p.page.locator('.shell[data-conn=online]').waitFor();
      await p.page.getByRole('button', { name: '+ New chat' }).click();
      // The new session can reach the list (over /ws) before the page moves to it: wait for
      // the address rather than reading it once (that race failed one run in three).
      await p.page.waitForURL(/#\/chat\/s_/);
      await p.page.locator('[data-testid=session-item]').first().waitFor();
      assert.equal(p.errors, [], 'no refused request or socket');
    } finally {
      await p.close();
    }
  });
}

test.run();
