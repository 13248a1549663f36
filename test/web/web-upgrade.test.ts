import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startReleaseServer, type ReleaseServer } from '../fixtures/release-server.js';
import { api } from '../helpers/api.js';
import {
  browserUnavailable,
  STEP_MS,
  finishOnboarding,
  launch,
  newPage,
  type PageRig,
} from '../helpers/browser.js';
import { startRig, type TurnRig } from '../helpers/turns.js';
import { skipFile } from '../helpers/skip.js';
import { waitFor } from '../helpers/server.js';

/*
 * The version badge in headless Chromium against the real server, whose automatic check reads a
 * local HTTPS release host: the running version with a dot for the newer release, the popover
 * with its notes, and the Upgrade button, whose progress arrives over /ws and ends in the refusal
 * of an archive that does not match checksums.txt, with nothing changed. (The full upgrade through
 * the same route runs in upgrade-e2e.test.ts.)
 */

const browserMissing = browserUnavailable();

if (browserMissing) {
  skipFile(browserMissing);
} else {
  let host: ReleaseServer;
  let rig: TurnRig;
  let browser: Browser;
  let p: PageRig;
  let dir = '';

  test.before(async () => {
    host = await startReleaseServer();
    dir = mkdtempSync(join(tmpdir(), 'svc-web-upgrade-'));
    const archive = join(dir, 'archive.tar.gz');
    writeFileSync(archive, Buffer.alloc(300_000, 7));
    const name = `svc-9.9.9-${process.platform}-${process.arch}-node${process.versions.node.split('.')[0]}.tar.gz`;
    host.latest = {
      tag: 'v9.9.9',
      body: 'Nine nines.\n- a badge with a dot',
      assets: [
        { name, file: archive },
        { name: 'checksums.txt', text: `${'a'.repeat(64)}  ${name}\n` },
      ],
    };
    rig = await startRig({
      models: { oa: { protocol: 'openai' } },
      env: {
        SVC_RELEASES_URL: host.base,
        NODE_EXTRA_CA_CERTS: host.caFile,
        SVC_UPGRADE_CHECK: '1',
      },
    });
    await finishOnboarding(rig.port, 'oa');
    browser = await launch();
    p = await newPage(browser);
  });

  test.after(async () => {
    await p?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await rig?.stop();
    await host?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('the badge shows the version with an update dot; its popover has the notes; Upgrade shows the progress and the refusal', async () => {
    const { page } = p;
    const running = (await api(rig.port, 'GET', '/api/version')).body.version as string;
    // the check runs shortly after start; the page then reads it on load
    await waitFor(
      async () => (await api(rig.port, 'GET', '/api/version')).body.checked_at !== null,
      30_000,
      'the update check',
    );
    await page.goto(`${rig.server.base}/#/chat`);
    const badge = page.getByRole('button', {
      name: `v${running}, the svc version; update available: 9.9.9`,
    });
    await badge.waitFor();
    assert.is((await badge.innerText()).trim(), `v${running}`);
    assert.is(await badge.locator('.update-dot').count(), 1);
    await badge.click();
    const pop = page.getByRole('dialog', { name: 'svc version' });
    await pop.getByText('svc 9.9.9', { exact: true }).waitFor();
    assert.match(
      await pop.locator('.release-notes').innerText(),
      'Nine nines.\n- a badge with a dot',
    );
    await pop.getByRole('button', { name: 'Upgrade to 9.9.9' }).click();
    const failed = pop.locator('.upgrade-steps li[data-stage="failed"]');
    // The upgrade fetches and checks a release first: a few steps' worth.
    await failed.waitFor({ timeout: 4 * STEP_MS });
    const text = await failed.innerText();
    assert.match(text, 'does not match checksums.txt');
    assert.match(text, `expected: ${'a'.repeat(64)}`);
    assert.ok(
      (await pop.locator('.upgrade-steps li[data-stage="downloading"]').count()) === 1,
      'the download was shown',
    );
    assert.is(
      (await api(rig.port, 'GET', '/api/version')).body.version,
      running,
      'still the same version',
    );
    assert.not.ok(
      readdirSync(rig.server.home).includes('versions') &&
        readdirSync(join(rig.server.home, 'versions')).length > 0,
      'nothing installed',
    );
    await page.keyboard.press('Escape');
    await pop.waitFor({ state: 'detached' });
  });

  test.run();
}
