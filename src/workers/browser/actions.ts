import type { Locator, Page } from 'playwright-core';
import { isRef, type BrowserStep } from '../../shared/browser/steps.js';
import type { BrowserActResult } from '../../shared/protocol/browser.js';
import type { BrowserLink } from './connection.js';

const ACTION_TIMEOUT_MS = 10_000;
const NAVIGATE_TIMEOUT_MS = 30_000;
export const SNAPSHOT_CHARS = 20_000;

/** A ref from the last snapshot, or a Playwright selector (role=…, text=…, css). */
function locate(page: Page, target: string): Locator {
  return isRef(target) ? page.getByRef(target) : page.locator(target).first();
}

function cap(text: string, max: number): string {
  return text.length <= max
    ? text
    : `${text.slice(0, max)}\n… (cut at ${max} of ${text.length} characters; act on what is shown, or scroll and snapshot again)`;
}

/** What the page shows now, short: for a failed step, so the agent (or the user) sees why. */
export async function pageGist(page: Page, max = 1500): Promise<string> {
  const snap = await page.ariaSnapshot({ mode: 'ai', timeout: 5000 }).catch(() => '');
  return cap(snap, max);
}

/**
 * Runs one step in the agent's tab and answers what happened with the page's URL and title.
 * `signal` (an interrupt) stops an action that waits.
 */
export async function runStep(
  link: BrowserLink,
  step: BrowserStep,
  signal: AbortSignal,
  maxChars = SNAPSHOT_CHARS,
): Promise<BrowserActResult> {
  let page = await link.page();
  const t = { timeout: ACTION_TIMEOUT_MS, signal };
  let output = '';
  let png: string | undefined;
  const target = step.target ?? '';
  const value = step.value ?? '';
  switch (step.action) {
    case 'navigate': {
      const res = await page.goto(value, {
        waitUntil: 'domcontentloaded',
        timeout: NAVIGATE_TIMEOUT_MS,
        signal,
      });
      output = `Navigated to ${page.url()}${res ? ` (HTTP ${res.status()})` : ''}.`;
      break;
    }
    case 'snapshot': {
      const snap = await page.ariaSnapshot({ mode: 'ai', timeout: ACTION_TIMEOUT_MS, signal });
      output = `Refs like [ref=e5] name elements for click, type, select and wait (valid until the page changes).\n${cap(snap, maxChars)}`;
      break;
    }
    case 'click':
      await locate(page, target).click(t);
      output = `Clicked ${target}.`;
      break;
    case 'type':
      await locate(page, target).fill(value, t);
      output = `Typed ${value.length} characters into ${target}.`;
      break;
    case 'press':
      if (step.target) await locate(page, target).press(value, t);
      else await page.keyboard.press(value);
      output = `Pressed ${value}${step.target ? ` in ${target}` : ''}.`;
      break;
    case 'scroll':
      if (step.target) {
        await locate(page, target).scrollIntoViewIfNeeded(t);
        output = `Scrolled ${target} into view.`;
      } else {
        const dir = value || 'down';
        const js =
          {
            top: 'window.scrollTo(0, 0)',
            bottom: 'window.scrollTo(0, document.body.scrollHeight)',
            up: 'window.scrollBy(0, -window.innerHeight * 0.8)',
            down: 'window.scrollBy(0, window.innerHeight * 0.8)',
          }[dir] ?? '';
        await page.evaluate(js); // a fixed expression of ours, never text from the model
        output = `Scrolled ${dir}.`;
      }
      break;
    case 'select': {
      const chosen = await locate(page, target).selectOption(value, t);
      output = `Selected ${chosen.join(', ') || 'nothing'} in ${target}.`;
      break;
    }
    case 'wait': {
      const timeout = (step.timeout_seconds ?? 10) * 1000;
      if (step.target) await locate(page, target).waitFor({ state: 'visible', timeout, signal });
      else await page.getByText(value).first().waitFor({ state: 'visible', timeout, signal });
      output = `${step.target ? target : `"${value}"`} is on the page.`;
      break;
    }
    case 'screenshot':
      png = (await page.screenshot({ type: 'png', timeout: ACTION_TIMEOUT_MS })).toString('base64');
      output = 'Took a screenshot of the tab.';
      break;
    case 'tabs': {
      const op = value || 'list';
      if (op === 'open') page = await link.openTab(step.target);
      else if (op === 'select') page = await link.selectTab(tabIndex(target));
      else if (op === 'close') {
        await link.closeTab(tabIndex(target));
        page = await link.page();
      }
      const tabs = await link.tabs();
      output = `${op === 'list' ? '' : `Did ${op}. `}Tabs:\n${tabs.map((x) => `${x.active ? '*' : ' '} ${x.index}: ${x.title || '(no title)'} ${x.url}`).join('\n')}`;
      break;
    }
    case 'back': {
      const res = await page.goBack({
        waitUntil: 'domcontentloaded',
        timeout: NAVIGATE_TIMEOUT_MS,
      });
      output = res === null ? 'There was no earlier page in this tab.' : 'Went back.';
      break;
    }
  }
  return {
    ok: true,
    output,
    url: page.url(),
    title: await page.title().catch(() => ''),
    ...(png ? { png_base64: png } : {}),
  };
}

function tabIndex(target: string): number {
  const n = Number(target);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`"${target}" is not a tab number; tabs list shows them`);
  return n;
}
