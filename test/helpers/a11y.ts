// What the Web UI tests share for keyboards and screen readers: axe-core and where focus is.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { waitFor } from './server.js';

const axeSource = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

/**
 * axe-core (WCAG 2.1 A/AA) on the page as it is: every serious or critical violation as one line
 * (rule, impact, the first nodes and why), each prefixed with `what`. Empty when there is none.
 */
export async function axe(page: Page, what: string): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(axeSource);
  const script = [
    "axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }).then(function (r) {",
    "  return r.violations.filter(function (v) { return v.impact === 'serious' || v.impact === 'critical'; }).map(function (v) {",
    "    return v.id + ' (' + v.impact + '): ' + v.nodes.slice(0, 3).map(function (n) { return n.target.join(' ') + ' - ' + String(n.failureSummary || '').replace(/\\s+/g, ' ').slice(0, 160); }).join(' | ');",
    '  });',
    '})',
  ].join('\n');
  const found = (await page.evaluate(script)) as string[];
  return found.map((f) => `${what}: ${f}`);
}

/** The element that has focus, as a short description; "BODY" when focus is lost. */
export const active = (page: Page) =>
  page.evaluate(
    `(() => { const a = document.activeElement; if (!a || a === document.body) return 'BODY'; return a.tagName + (a.getAttribute('data-testid') ? '[' + a.getAttribute('data-testid') + ']' : '') + ' ' + (a.getAttribute('aria-label') || a.textContent || '').trim().slice(0, 40); })()`,
  ) as Promise<string>;

/** After an action: focus settles somewhere other than <body>. */
export async function focusKept(page: Page, after: string): Promise<string> {
  return waitFor(
    async () => {
      const a = await active(page);
      return a === 'BODY' ? undefined : a;
    },
    5000,
    `focus to be on an element (not <body>) after ${after}`,
  );
}
