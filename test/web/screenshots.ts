import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { textReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { browserUnavailable, finishOnboarding, launch, newPage } from '../helpers/browser.js';
import { repoRoot, waitFor } from '../helpers/server.js';
import { startRig } from '../helpers/turns.js';

/*
 * `npm run screenshots`: every page of the Web UI at desktop (1280×800) and phone (390×844)
 * sizes, light and dark, into docs/images/pages/<page>-<size>-<scheme>.png, from a real
 * `svc serve` with the fake provider and a little of everything in it (a chat with a tool call,
 * an MCP server, a workflow, a schedule, usage). Not a test: it refreshes the docs' pictures.
 * SVC_SCREENSHOTS_DIR writes them elsewhere (to look without touching the work tree).
 */

const out = process.env.SVC_SCREENSHOTS_DIR ?? join(repoRoot, 'docs', 'images', 'pages');
const mcpFixture = fileURLToPath(new URL('../fixtures/mcp-server.js', import.meta.url));

const WORKFLOW = `description: Summarise a folder's changes and post the summary.
inputs:
  folder:
    description: The folder to look at
    required: true
steps:
  - id: changes
    run: git -C {{inputs.folder}} log --oneline -5
  - id: summary
    needs: [changes]
    prompt: "Summarise these changes in two lines: {{steps.changes.output}}"
`;

const missing = browserUnavailable();
if (missing) {
  console.error(`screenshots: ${missing}`);
  process.exit(1);
}

const rig = await startRig({ models: { oa: { protocol: 'openai' } } });
const browser = await launch();
try {
  const { port } = rig;
  await api(port, 'PATCH', '/api/config/models/oa', { prices: { input: 2, output: 8 } });

  // Onboarding first, while it is not done yet.
  const shots: Array<[string, string, (page: Page) => Promise<void>]> = [
    ['onboarding', '#/onboarding', (page) => page.getByTestId('model-form').waitFor()],
  ];
  await shoot(shots);
  await finishOnboarding(port, 'oa');

  // A chat with reasoning, a tool call and a Markdown reply; two more chats for the list.
  const chat = await turn('Check the time', [
    {
      parts: [
        { reasoning: ['The user wants ', 'the current time.'] },
        { text: 'Let me look.' },
        { toolCall: { name: 'current_time', arguments: ['{"time_zone":"UTC"}'] } },
      ],
      usage: { input: 1200, output: 80 },
    },
    {
      ...textReply(
        "It is **late** in UTC. A helper that formats it:\n\n```ts\nexport function hhmm(d: Date): string {\n  return d.toISOString().slice(11, 16);\n}\n```\n\n- the clock is the server's\n- the zone is UTC\n",
      ),
      usage: { input: 1500, output: 220 },
    },
  ]);
  await turn('Plan the release notes', [
    {
      ...textReply('Here is a plan: collect the merged changes, group them, write.'),
      usage: { input: 900, output: 60 },
    },
  ]);
  await turn('Translate the README intro', [
    { ...textReply('Voici la traduction.'), usage: { input: 700, output: 40 } },
  ]);

  await api(port, 'POST', '/api/mcp/servers', {
    name: 'files',
    command: process.execPath,
    args: [mcpFixture, 'stdio'],
  });
  mkdirSync(join(rig.server.home, 'workflows'), { recursive: true });
  writeFileSync(join(rig.server.home, 'workflows', 'weekly-summary.yml'), WORKFLOW);
  await api(port, 'POST', '/api/tasks', {
    kind: 'cron',
    name: 'Morning briefing',
    schedule: '0 8 * * 1-5',
    prompt: 'Summarise my unread messages.',
  });
  await api(port, 'PUT', '/api/budgets', { daily: { usd: 5 } });

  await shoot([
    [
      'chat',
      `#/chat/${chat}`,
      (page) =>
        page.getByTestId('assistant-message').filter({ hasText: 'the zone is UTC' }).waitFor(),
    ],
    ['new-chat', '#/chat', (page) => page.getByTestId('composer-input').waitFor()],
    [
      'settings',
      '#/settings/models',
      (page) => page.locator('[data-testid=model-entry]').first().waitFor(),
    ],
    [
      'tools',
      '#/settings/tools',
      (page) => page.locator('[data-testid=tool-info]').first().waitFor(),
    ],
    [
      'mcp',
      '#/mcp',
      (page) =>
        page.locator('[data-testid=mcp-status]', { hasText: 'connected' }).first().waitFor(),
    ],
    ['skills', '#/skills', (page) => page.locator('[data-testid=skill]').first().waitFor()],
    [
      'workflows',
      '#/workflows',
      (page) => page.locator('[data-testid=workflow]').first().waitFor(),
    ],
    ['schedules', '#/schedules', (page) => page.getByText('Morning briefing').first().waitFor()],
    ['channels', '#/channels', (page) => page.locator('.page h2').first().waitFor()],
    ['browser', '#/browser', (page) => page.getByRole('heading', { name: 'Connection' }).waitFor()],
    ['usage', '#/usage', (page) => page.getByTestId('usage-cost').waitFor()],
    ['status', '#/status', (page) => page.locator('[data-testid=process-row]').first().waitFor()],
    ['search', '#/search/time', (page) => page.locator('.search-results a').first().waitFor()],
  ]);
  // The phone's menu, open.
  await shoot(
    [
      [
        'menu',
        '#/status',
        async (page) => {
          await page.getByTestId('menu-button').click();
          await page.locator('#views-nav.open').waitFor();
        },
      ],
    ],
    ['phone'],
  );
  console.log(`screenshots: written to ${out}`);
} finally {
  await browser.close().catch(() => undefined);
  await rig.stop();
}

/** One chat: the first message and the fake provider's replies, waited for. */
async function turn(
  message: string,
  replies: Parameters<typeof rig.fake.enqueue>,
): Promise<string> {
  const id = (await api(rig.port, 'POST', '/api/sessions', { title: message })).body.id as string;
  rig.fake.enqueue(...replies);
  const r = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message, attachments: [] });
  if (r.status !== 200) throw new Error(`the turn failed: ${JSON.stringify(r.body)}`);
  return id;
}

/** Each page at each size and scheme: viewport-sized PNGs, the page settled first. */
async function shoot(
  pages: Array<[string, string, (page: Page) => Promise<void>]>,
  sizes: Array<'desktop' | 'phone'> = ['desktop', 'phone'],
): Promise<void> {
  mkdirSync(out, { recursive: true });
  for (const size of sizes) {
    for (const colorScheme of ['light', 'dark'] as const) {
      const viewport =
        size === 'desktop' ? { width: 1280, height: 800 } : { width: 390, height: 844 };
      const rigPage = await newPage(browser, { viewport, colorScheme });
      try {
        const { page } = rigPage;
        await page.goto(`${rig.server.base}/?access_key=${encodeURIComponent(rig.server.key())}`);
        for (const [name, hash, ready] of pages) {
          await page.goto(`${rig.server.base}/${hash}`);
          await ready(page);
          // Nothing blinking or half-drawn: fonts loaded, no animation mid-way.
          await page.evaluate('document.fonts.ready');
          await waitFor(
            async () =>
              (await page.evaluate(
                'document.getAnimations().filter((a) => a.playState === "running" && a.effect?.getTiming().iterations !== Infinity).length',
              )) === 0,
            10_000,
            'animations to end',
          );
          // docs/design-system.md: one primary button per view; say where a page has more.
          const primaries = await page.locator('button.primary:visible').count();
          if (primaries > 1)
            console.error(`screenshots: ${name} (${size}) shows ${primaries} primary buttons`);
          const file = join(out, `${name}-${size}-${colorScheme}.png`);
          await page.screenshot({ path: file, animations: 'disabled', caret: 'hide' });
        }
        if (rigPage.errors.length > 0) throw new Error(`page errors: ${rigPage.errors.join('; ')}`);
      } finally {
        await rigPage.close();
      }
    }
  }
}
