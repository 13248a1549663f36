import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strToU8, unzipSync, zipSync } from 'fflate';
import type { Browser, Page } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { axe, focusKept } from '../helpers/a11y.js';
import { api } from '../helpers/api.js';
import {
  browserUnavailable,
  finishOnboarding,
  launch,
  newPage,
  type PageRig,
} from '../helpers/browser.js';
import { waitFor } from '../helpers/server.js';
import { startRig, type TurnRig } from '../helpers/turns.js';
import { skipFile } from '../helpers/skip.js';

/*
 * The Skills page in headless Chromium against the real server: built-ins and an invalid skill
 * with its reason; import by the file input, by dropping a zip, by a path; a hostile zip refused
 * with its rule; the switch (seen by the next turn, and live when changed elsewhere); Export
 * downloads the same bytes; Delete goes to the trash and the Trash page restores it.
 */

const browserMissing = browserUnavailable();

const FILES: Record<string, Uint8Array> = {
  'SKILL.md': strToU8(
    '---\nname: weather\ndescription: Reports the weather in a fixed format.\n---\n\nAnswer with BAROMETER first.\n',
  ),
  'templates/report.md': strToU8('# Report\n\n- temperature: {{t}}\n'),
  'blob.bin': new Uint8Array([0, 1, 2, 3, 255, 254, 0, 7]),
};
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const hashesOf = (files: Record<string, Uint8Array>) =>
  Object.fromEntries(Object.entries(files).map(([k, v]) => [k, sha(v)]));

/** A skill's zip with its files under `<name>/`, the way another tool exports one. */
function skillZip(name: string, files: Record<string, Uint8Array>): Buffer {
  return Buffer.from(
    zipSync(Object.fromEntries(Object.entries(files).map(([k, v]) => [`${name}/${k}`, v]))),
  );
}

/** Drops a file on the page's drop zone as a user dragging it from the file manager would. */
async function dropFile(page: Page, name: string, bytes: Buffer): Promise<void> {
  const dt = await page.evaluateHandle(
    `(() => { const bin = atob(${JSON.stringify(bytes.toString('base64'))}); const u = new Uint8Array(bin.length); for (let i = 0; i < bin.length; i++) u[i] = bin.charCodeAt(i); const d = new DataTransfer(); d.items.add(new File([u], ${JSON.stringify(name)}, { type: 'application/zip' })); return d; })()`,
  );
  const zone = page.getByTestId('skill-drop');
  await zone.dispatchEvent('dragenter', { dataTransfer: dt });
  await zone.dispatchEvent('dragover', { dataTransfer: dt });
  await zone.dispatchEvent('drop', { dataTransfer: dt });
  await dt.dispose();
}

if (browserMissing) {
  skipFile(browserMissing);
} else {
  let rig: TurnRig;
  let browser: Browser;
  let p: PageRig;
  let work = '';
  const skillsDir = () => join(rig.server.home, 'skills');
  const card = (name: string) => p.page.locator(`[data-testid="skill"][data-name="${name}"]`);
  const listed = async (name: string) =>
    ((await api(rig.port, 'GET', '/api/skills')).body.items as any[]).find((s) => s.name === name);
  const onDisk = (name: string) =>
    Object.fromEntries(
      Object.keys(FILES).map((k) => [k, sha(readFileSync(join(skillsDir(), name, k)))]),
    );
  const importAlert = () => p.page.locator('[data-testid="skill-import"] [role="alert"]');

  test.before(async () => {
    work = mkdtempSync(join(tmpdir(), 'svc-web-skills-'));
    rig = await startRig({ models: { oa: { protocol: 'openai' } } });
    await finishOnboarding(rig.port, 'oa');
    mkdirSync(join(skillsDir(), 'broken'), { recursive: true });
    writeFileSync(
      join(skillsDir(), 'broken', 'SKILL.md'),
      '---\nname: broken\n---\nno description here\n',
    );
    browser = await launch();
    p = await newPage(browser);
    await p.page.goto(`${rig.server.base}/#/chat`);
  });

  test.after(async () => {
    await p?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await rig?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('the nav leads to Skills: built-ins with a switch and no Delete; an invalid skill shows its reason', async () => {
    const { page } = p;
    await page.getByRole('link', { name: 'Skills', exact: true }).click();
    await page.getByRole('heading', { name: 'Skills', exact: true }).waitFor();
    const builtin = card('svc-config');
    await builtin.waitFor();
    assert.match(await builtin.innerText(), /built-in/);
    assert.ok(await builtin.getByRole('switch', { name: 'Enabled (svc-config)' }).isChecked());
    assert.is(
      await builtin.getByRole('button', { name: /Delete/ }).count(),
      0,
      'a built-in cannot be deleted, only disabled',
    );
    assert.is(await builtin.getByRole('link', { name: 'Export svc-config' }).count(), 1);
    const broken = card('broken');
    assert.match(await broken.innerText(), /invalid/);
    assert.match(
      await broken.getByTestId('skill-why').innerText(),
      /Not offered to the model: .*description/,
    );
    assert.equal(await axe(page, 'skills (light)'), []);
  });

  test('a zip chosen with the file input is imported byte for byte; the same name again is refused until Replace is ticked', async () => {
    const { page } = p;
    const zip = skillZip('weather', FILES);
    await page
      .getByTestId('skill-file')
      .setInputFiles({ name: 'weather.zip', mimeType: 'application/zip', buffer: zip });
    await card('weather').waitFor();
    assert.match(await card('weather').innerText(), /yours/);
    assert.match(await card('weather').innerText(), /3 files/);
    await page.getByTestId('toast').filter({ hasText: 'Imported "weather".' }).waitFor();
    assert.equal(onDisk('weather'), hashesOf(FILES));

    await page
      .getByTestId('skill-file')
      .setInputFiles({ name: 'weather.zip', mimeType: 'application/zip', buffer: zip });
    await importAlert().waitFor();
    assert.match(await importAlert().innerText(), /weather.*force|force.*weather/i);
    await page.getByLabel(/Replace a skill of the same name/).check();
    await page
      .getByTestId('skill-file')
      .setInputFiles({ name: 'weather.zip', mimeType: 'application/zip', buffer: zip });
    await page.getByTestId('toast').filter({ hasText: 'the old one is in the trash' }).waitFor();
    assert.is(await importAlert().count(), 0, 'the error is gone');
    await page.getByLabel(/Replace a skill of the same name/).uncheck();
    const trash = (await api(rig.port, 'GET', '/api/trash')).body.items;
    assert.ok(
      trash.some((i: any) => i.kind === 'skill' && i.name === 'weather'),
      'the replaced copy is in the trash',
    );
  });

  test('a zip dropped on the zone is imported; a hostile one is refused naming its rule and writes nothing', async () => {
    const { page } = p;
    await dropFile(
      page,
      'dropped.zip',
      skillZip('dropped', {
        'SKILL.md': strToU8(
          '---\nname: dropped\ndescription: Came in by drag and drop.\n---\nbody\n',
        ),
      }),
    );
    await card('dropped').waitFor();
    assert.match(await card('dropped').innerText(), /Came in by drag and drop/);

    await dropFile(
      page,
      'evil.zip',
      Buffer.from(
        zipSync({
          'SKILL.md': strToU8('---\nname: evil\ndescription: x\n---\n'),
          '../escape.txt': strToU8('x'),
        }),
      ),
    );
    await importAlert().waitFor();
    assert.match(await importAlert().innerText(), /path_escape/);
    assert.is(await card('evil').count(), 0);
    assert.is(await listed('evil'), undefined);

    await dropFile(page, 'notes.txt', Buffer.from('not a zip'));
    await importAlert().filter({ hasText: '"notes.txt" is not a .zip file' }).waitFor();
  });

  test('a folder is imported by its path on the server', async () => {
    const { page } = p;
    const dir = join(work, 'pathed');
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'SKILL.md'),
      '---\nname: pathed\ndescription: Imported from a folder path.\n---\nbody\n',
    );
    await page.getByLabel(/Or a path on the server/).fill(dir);
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await card('pathed').waitFor();
    assert.is(
      await page.getByLabel(/Or a path on the server/).inputValue(),
      '',
      'the field is cleared',
    );
    await page.getByLabel(/Or a path on the server/).fill(join(work, 'nowhere'));
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await importAlert().filter({ hasText: 'Nothing exists at' }).waitFor();
  });

  test('the switch turns a skill off (the next turn does not see it) and on with the keyboard; a change made elsewhere shows live', async () => {
    const { page } = p;
    const sw = card('weather').getByRole('switch', { name: 'Enabled (weather)' });
    await sw.click();
    await waitFor(
      async () => (await listed('weather')).enabled === false,
      10_000,
      'the skill to be off',
    );
    assert.not.ok(await sw.isChecked());

    const chat = (await api(rig.port, 'POST', '/api/sessions', { title: 'Skills seen' })).body.id;
    const system = async () => {
      const from = rig.fake.requests.length;
      assert.is(
        (await api(rig.port, 'POST', `/api/chat/${chat}/turn`, { message: 'hi', attachments: [] }))
          .status,
        200,
      );
      const msgs = rig.fake.requests[from]!.body!.messages as any[];
      return String(msgs.find((m) => m.role === 'system')?.content ?? '');
    };
    const off = await system();
    assert.not.match(off, /- weather:/, 'a skill switched off in the page is not offered');
    assert.match(off, /- dropped: Came in by drag and drop/);

    await sw.focus();
    await page.keyboard.press('Space');
    await waitFor(
      async () => (await listed('weather')).enabled === true,
      10_000,
      'the skill to be on',
    );
    await focusKept(page, 'Space on the switch');
    assert.match(await system(), /- weather: Reports the weather/);

    assert.is(
      (await api(rig.port, 'PATCH', '/api/skills/weather/toggle', { enabled: false })).status,
      200,
    );
    await waitFor(
      async () => !(await sw.isChecked()),
      10_000,
      'the switch to follow a change made through the API',
    );
    assert.is(
      (await api(rig.port, 'PATCH', '/api/skills/weather/toggle', { enabled: true })).status,
      200,
    );
    await waitFor(() => sw.isChecked(), 10_000, 'the switch to come back on');
  });

  test('Export downloads the skill as <name>.zip with the same bytes', async () => {
    const { page } = p;
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      card('weather').getByRole('link', { name: 'Export weather' }).click(),
    ]);
    assert.is(download.suggestedFilename(), 'weather.zip');
    const entries = unzipSync(new Uint8Array(readFileSync(await download.path())));
    assert.equal(
      Object.keys(entries).sort(),
      Object.keys(FILES)
        .map((k) => `weather/${k}`)
        .sort(),
    );
    assert.equal(
      hashesOf(
        Object.fromEntries(
          Object.entries(entries).map(([k, v]) => [k.slice('weather/'.length), v]),
        ),
      ),
      hashesOf(FILES),
    );
  });

  test('Delete moves a skill to the trash; the Trash page restores it with the same files', async () => {
    const { page } = p;
    await card('weather').getByRole('button', { name: 'Delete weather' }).click();
    await card('weather').waitFor({ state: 'detached' });
    await page.getByTestId('toast').filter({ hasText: 'Moved "weather" to the trash.' }).waitFor();
    await focusKept(page, 'Delete');
    assert.is(await listed('weather'), undefined);

    await page.getByRole('link', { name: 'Settings', exact: true }).click();
    await page.locator('.tabs a', { hasText: 'Trash' }).click();
    const row = page
      .locator('[data-testid="trash-item"]', { hasText: 'weather' })
      .filter({ has: page.locator('.chip', { hasText: 'skill' }) });
    // The copy the import test replaced is in the trash too; both hold the same files.
    await row.first().waitFor();
    await row.first().getByRole('button', { name: 'Restore' }).click();
    await page.getByTestId('toast').filter({ hasText: 'Restored "weather".' }).waitFor();

    await page.getByRole('link', { name: 'Skills', exact: true }).click();
    await card('weather').waitFor();
    assert.equal(onDisk('weather'), hashesOf(FILES));
    assert.is((await listed('weather')).valid, true);
  });

  test("Settings → Tools: each tool's purpose in words, and a switch for its default that writes permissions.yml (allowing asks for the key; restart_server stays locked)", async () => {
    const { page } = p;
    const rules = join(rig.server.home, 'permissions.yml');
    const rulesText = () => {
      try {
        return readFileSync(rules, 'utf8');
      } catch {
        return '';
      }
    };
    writeFileSync(
      rules,
      '# mine: keep this line\nweb_fetch:\n  - deny: { host: "*.internal.example" }\n',
    );
    await page.goto(`${rig.server.base}/#/settings/tools`);
    const row = (name: string) => page.locator(`[data-testid="tool-info"][data-name="${name}"]`);
    await row('current_time').getByText("Tells the agent today's date and the time.").waitFor();
    const purposes = await page.getByTestId('tool-purpose').allInnerTexts();
    assert.ok(purposes.length >= 20, `every tool listed (${purposes.length})`);
    for (const text of purposes) {
      assert.ok(text.length > 10, 'a purpose in words');
      assert.not.match(text, /[`*_]{1,2}\w|\]\(/, `no Markdown in "${text}"`);
    }

    // write_file asks by default; allowing it needs the key, then the file says so.
    const write = row('write_file').getByRole('switch', { name: 'Allow without asking' });
    assert.is(await write.isChecked(), false);
    assert.is(await row('write_file').getByTestId('tool-default').innerText(), 'Asks first.');
    await write.click();
    const unlock = row('write_file').getByTestId('key-unlock');
    await unlock.waitFor();
    assert.is(await write.isChecked(), false, 'nothing changed without the key');
    assert.not.match(rulesText(), /write_file/);
    await unlock.getByLabel('Access key').fill(rig.server.key());
    await unlock.getByRole('button', { name: 'Unlock' }).click();
    await row('write_file')
      .getByTestId('tool-default')
      .getByText('Runs without asking (set in permissions.yml).')
      .waitFor();
    assert.is(await write.isChecked(), true);
    assert.match(rulesText(), /^# mine: keep this line$/m, 'your lines stay');
    assert.match(rulesText(), /write_file:\n\s+- default: allow/);
    const listed = (await api(rig.port, 'GET', '/api/tools')).body.items.find(
      (t: any) => t.name === 'write_file',
    );
    assert.equal(listed.permission, { default: 'allow', source: 'permissions.yml', locked: null });

    // Back to ask, the tool's built-in default: the entry goes rather than being written.
    await write.press('Space');
    await row('write_file').getByTestId('tool-default').getByText('Asks first.').waitFor();
    assert.not.match(rulesText(), /write_file/);
    assert.match(rulesText(), /web_fetch:/);

    // terminal to ask and back: allow is its built-in default, so no `default: allow` is left
    // behind (that would switch off its extra care without a sandbox).
    const terminal = row('terminal').getByRole('switch', { name: 'Allow without asking' });
    assert.is(await terminal.isChecked(), true);
    await terminal.click();
    await row('terminal')
      .getByTestId('tool-default')
      .getByText('Asks first (set in permissions.yml).')
      .waitFor();
    assert.match(rulesText(), /terminal:\n\s+- default: ask/);
    await terminal.click();
    await row('terminal').getByTestId('tool-default').getByText('Runs without asking.').waitFor();
    assert.not.match(rulesText(), /terminal/);

    // The engine never lets restart_server run without asking: the switch is off and locked.
    const restart = row('restart_server').getByRole('switch', { name: 'Allow without asking' });
    assert.is(await restart.isDisabled(), true);
    assert.match(
      await row('restart_server').getByTestId('tool-default').innerText(),
      /always asks/,
    );
    const refused = await api(
      rig.port,
      'PUT',
      '/api/tools/restart_server/permission',
      { default: 'allow' },
      { key: rig.server.key() },
    );
    assert.is(refused.status, 409);
    assert.match(refused.body.error.message, /always asks/);
    // Without the key, allowing is refused even from this machine; bad input is a 4xx in words.
    const unkeyed = await api(rig.port, 'PUT', '/api/tools/glob/permission', { default: 'ask' });
    assert.is(unkeyed.status, 200, 'asking more needs no key');
    const widen = await api(rig.port, 'PUT', '/api/tools/glob/permission', { default: 'allow' });
    assert.is(widen.status, 403);
    assert.is(widen.body.error.code, 'key_required');
    const bad = await api(rig.port, 'PUT', '/api/tools/glob/permission', { default: 'deny' });
    assert.is(bad.status, 400);
    assert.match(bad.body.error.message, /allow.*ask/);
    const none = await api(rig.port, 'PUT', '/api/tools/no_such_tool/permission', {
      default: 'ask',
    });
    assert.is(none.status, 404);
    assert.match(none.body.error.message, /GET \/api\/tools/);
    // A broken permissions.yml is left alone, and the page says why its switches wait.
    writeFileSync(rules, 'terminal: [ {default: maybe} ]\n');
    const broken = await api(rig.port, 'PUT', '/api/tools/glob/permission', { default: 'ask' });
    assert.is(broken.status, 409);
    assert.match(broken.body.error.message, /permissions\.yml has a problem/);
    assert.is(rulesText(), 'terminal: [ {default: maybe} ]\n');
    await page.reload();
    await page.getByTestId('rules-problem').waitFor();
    assert.is(await write.isDisabled(), true);
    assert.equal(await axe(page, 'settings tools'), []);
    rmSync(rules);
    assert.equal(p.errors, []);
  });

  test('axe-core: no serious or critical violation on the Skills page, light and dark, desktop and phone', async () => {
    const failures: string[] = [];
    for (const colorScheme of ['light', 'dark'] as const) {
      for (const viewport of [
        { width: 1200, height: 800 },
        { width: 390, height: 780 },
      ]) {
        const other = await newPage(browser, { viewport, colorScheme });
        try {
          await other.page.goto(`${rig.server.base}/#/skills`);
          await other.page.locator('[data-testid="skill"][data-name="broken"]').waitFor();
          failures.push(...(await axe(other.page, `skills (${colorScheme}, ${viewport.width}px)`)));
          assert.equal(other.errors, []);
        } finally {
          await other.close();
        }
      }
    }
    assert.equal(failures, []);
    assert.equal(p.errors, []);
  });
}

test.run();
