import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { browserActions, type BrowserStep } from '../../../../shared/browser/steps.js';
import {
  fillParams,
  parseRecording,
  readRecording,
  recordingNameSchema,
  writeRecording,
} from '../../../../shared/browser/recording.js';
import { stringify } from 'yaml';
import type { Config } from '../../../../shared/config/schema.js';
import type { Endpoint } from '../../../../shared/protocol/endpoint.js';
import type { BrowserActResult } from '../../../../shared/protocol/browser.js';
import { saveImage, untilAborted } from './mcp-result.js';
import {
  defineTool,
  type Tool,
  type ToolContext,
  type ToolResult,
  type ToolSubject,
} from '../registry.js';

const browserArgs = z
  .strictObject({
    action: z.enum(browserActions).describe('What to do'),
    url: z.string().min(1).max(8192).optional().describe('navigate, tabs open: the address'),
    target: z
      .string()
      .min(1)
      .max(2000)
      .optional()
      .describe(
        'click, type, select, wait, press, scroll: a ref from the last snapshot (e.g. "e12") or a Playwright selector (role=button[name="Send"], text=Sign in, #id)',
      ),
    text: z
      .string()
      .max(20_000)
      .optional()
      .describe('type: the text to fill in; wait: a text to wait for'),
    key: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('press: a key such as Enter, Tab, Control+A'),
    option: z.string().max(2000).optional().describe('select: the option value or label'),
    direction: z
      .enum(['up', 'down', 'top', 'bottom'])
      .optional()
      .describe('scroll: which way (default down)'),
    tab_action: z
      .enum(['list', 'open', 'select', 'close'])
      .optional()
      .describe('tabs: what to do (default list)'),
    tab: z
      .number()
      .int()
      .min(0)
      .max(1000)
      .optional()
      .describe('tabs select/close: the tab number from the list'),
    timeout_seconds: z
      .number()
      .positive()
      .max(120)
      .optional()
      .describe('wait: at most this long (default 10)'),
  })
  .describe('One browser action');
type BrowserArgs = z.infer<typeof browserArgs>;

/** The tool's arguments as a step (the shape recordings keep too). */
export function toStep(a: BrowserArgs): BrowserStep {
  const s: BrowserStep = { action: a.action };
  const set = (k: 'target' | 'value', v: string | undefined) => {
    if (v !== undefined) s[k] = v;
  };
  set('target', a.target);
  switch (a.action) {
    case 'navigate':
      set('value', a.url);
      break;
    case 'type':
    case 'wait':
      set('value', a.text);
      break;
    case 'press':
      set('value', a.key);
      break;
    case 'select':
      set('value', a.option);
      break;
    case 'scroll':
      set('value', a.direction);
      break;
    case 'tabs':
      set('value', a.tab_action);
      if (a.tab_action === 'open') set('target', a.url);
      else if (a.tab !== undefined) s.target = String(a.tab);
      break;
  }
  if (a.timeout_seconds !== undefined) s.timeout_seconds = a.timeout_seconds;
  return s;
}

/**
 * What a browser call touches, for the permission engine: the address it opens (a file: URL as
 * its path), or for other actions the site the tab is on, so rules by host cover both and an
 * "allow for this session" covers one site.
 */
export function browserSubject(url: string | undefined): ToolSubject {
  if (url === undefined || url === '') return {};
  if (/^file:/i.test(url)) {
    try {
      return { path: fileURLToPath(url) };
    } catch {
      return { path: '/' };
    }
  }
  try {
    const u = new URL(url);
    return { url: u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : url };
  } catch {
    return { url };
  }
}

/** The address the agent's tab was last seen on (any turn of this worker); rules by host apply to actions there. */
let lastUrl: string | undefined;

async function act(
  endpoint: Endpoint,
  step: BrowserStep,
  ctx: ToolContext,
  suffix = '',
): Promise<BrowserActResult> {
  const callId = `${ctx.turnId}:${ctx.callId}${suffix}`;
  const cancel = () =>
    void endpoint.request('browser.cancel', { call_id: callId }).catch(() => undefined);
  ctx.signal.addEventListener('abort', cancel, { once: true });
  try {
    const r = await untilAborted(
      endpoint.request('browser.act', { call_id: callId, step, session_id: ctx.sessionId }),
      ctx.signal,
    );
    if (r.url) lastUrl = r.url;
    return r;
  } finally {
    ctx.signal.removeEventListener('abort', cancel);
  }
}

function notConfigured(config: Config): string | null {
  const b = config.browser;
  return b.cdp_url === undefined && b.port === undefined && b.launch === undefined
    ? 'No browser is configured; ask the user to connect one on the Browser page (a Chrome started with --remote-debugging-port, or browser.launch: auto).'
    : null;
}

function result(r: BrowserActResult, ctx: ToolContext): ToolResult {
  const where = r.url ? `\nPage: ${r.title || '(no title)'} — ${r.url}` : '';
  if (!r.png_base64) return { output: `${r.output}${where}`, ...(r.ok ? {} : { isError: true }) };
  const shot = saveImage(ctx, 'image/png', Buffer.from(r.png_base64, 'base64'));
  return {
    output: `${r.output} Saved as ${shot.path}.${where}`,
    images: [shot],
    wrote: [shot.path],
  };
}

/** The browser tools, offered only while a browser is configured (the model sees no tool it cannot use). */
export function browserTools(endpoint: Endpoint, config: () => Config): Tool[] {
  if (notConfigured(config()) !== null) return [];
  const browser = defineTool({
    name: 'browser',
    purpose:
      'Drives the connected Chromium: opens pages, clicks, types, reads and takes screenshots.',
    description:
      "Drives the user's browser (Chromium over the DevTools Protocol). Actions: navigate {url}; snapshot (the page's text and interactive elements, each with a ref like e12); " +
      'click {target}; type {target, text}; press {key, target?}; scroll {direction | target}; select {target, option}; wait {target | text, timeout_seconds?}; ' +
      'screenshot (saved as an artifact of the chat); tabs {tab_action: list|open|select|close, url?, tab?}; back. ' +
      "Take a snapshot before acting and use its refs as targets. Each action answers the page's URL and title.",
    args: browserArgs,
    subject: (a) =>
      browserSubject(
        a.action === 'navigate' || (a.action === 'tabs' && a.tab_action === 'open')
          ? a.url
          : lastUrl,
      ),
    run: async (a, ctx) => {
      const missing = notConfigured(config());
      if (missing) return { output: missing, isError: true };
      return result(await act(endpoint, toStep(a), ctx), ctx);
    },
  });

  const replayArgs = z.strictObject({
    name: recordingNameSchema.describe(
      'The recording (see the Browser page or GET /api/browser/recordings)',
    ),
    params: z
      .record(z.string(), z.string().max(20_000))
      .default({})
      .describe("Values for the recording's {{params}}; defaults fill the rest"),
  });
  type ReplayArgs = z.infer<typeof replayArgs>;
  /** The recording's steps with the params filled, or why not. */
  const load = (a: ReplayArgs, home: string): { steps: BrowserStep[] } | { error: string } => {
    const text = readRecording(home, a.name);
    if (text === null) return { error: `There is no recording "${a.name}".` };
    const p = parseRecording(text);
    if (!p.ok)
      return { error: `The recording "${a.name}" does not parse: ${p.issues[0]?.message}.` };
    return fillParams(p.recording, a.params);
  };
  const replay = defineTool({
    name: 'browser_replay',
    purpose: 'Replays one of your saved browser recordings.',
    description:
      'Replays a saved browser recording step by step, with values for its params. A step that fails stops the replay and says which step, its target and what the page showed.',
    args: replayArgs,
    subject: (a, ctx) => {
      const loaded = load(a, ctx.paths.home);
      if ('error' in loaded) return {};
      // Every address it opens is judged (rules by host included), and the strictest answer stands.
      const [first, ...rest] = loaded.steps
        .filter((s) => s.action === 'navigate')
        .map((s) => browserSubject(s.value ?? ''));
      return { ...first, also: rest };
    },
    run: async (a, ctx) => {
      const missing = notConfigured(config());
      if (missing) return { output: missing, isError: true };
      const loaded = load(a, ctx.paths.home);
      if ('error' in loaded) return { output: loaded.error, isError: true };
      const done: string[] = [];
      let last: BrowserActResult | undefined;
      for (const [i, step] of loaded.steps.entries()) {
        last = await act(endpoint, step, ctx, `:${i}`);
        if (!last.ok) {
          return {
            output: `Replay of "${a.name}" stopped at step ${i + 1} of ${loaded.steps.length} (${step.action}${step.target ? ` ${step.target}` : ''}${step.value !== undefined && step.action !== 'type' ? ` ${step.value}` : ''}): ${last.output}\nPage: ${last.title || '(no title)'} — ${last.url}`,
            isError: true,
          };
        }
        done.push(`${i + 1}. ${last.output}`);
      }
      return {
        output: `Replayed "${a.name}": ${loaded.steps.length} steps.\n${done.join('\n')}${last ? `\nPage: ${last.title || '(no title)'} — ${last.url}` : ''}`,
      };
    },
  });
  const recordArgs = z.strictObject({
    action: z
      .enum(['start', 'stop'])
      .describe(
        'start keeps every browser action of this chat from now on; stop saves them as a recording',
      ),
    name: recordingNameSchema.optional().describe("stop: the recording's name"),
    description: z.string().max(2000).optional().describe('stop: what the recording does'),
    params: z
      .array(
        z.strictObject({
          name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/),
          value: z
            .string()
            .min(1)
            .max(2000)
            .describe('the text you used, replaced by {{name}} in the steps'),
          description: z.string().max(500).optional(),
        }),
      )
      .max(20)
      .default([])
      .describe('stop: values in the steps to turn into params (their default is the value used)'),
  });
  const record = defineTool({
    name: 'browser_record',
    purpose: 'Records what the agent does in the browser as a recording you can replay.',
    description:
      'Records what you do with the browser tool in this chat as a reusable recording: call with action start, do the task, then action stop with a name (and params: values you typed that should become {{params}}). Snapshots and screenshots are not kept; refs become role selectors.',
    args: recordArgs,
    run: async (a, ctx) => {
      if (a.action === 'start') {
        await endpoint.request('browser.record', { session_id: ctx.sessionId, op: 'start' });
        return {
          output: 'Recording: every browser action of this chat is kept until browser_record stop.',
        };
      }
      if (!a.name)
        return {
          output: 'Give the recording a name ({"action": "stop", "name": "…"}).',
          isError: true,
        };
      if (readRecording(ctx.paths.home, a.name) !== null)
        return {
          output: `A recording "${a.name}" exists already; choose another name (the recording goes on until you stop it under a free name).`,
          isError: true,
        };
      const r = await endpoint.request('browser.record', { session_id: ctx.sessionId, op: 'stop' });
      if (!r.was_recording)
        return {
          output:
            'Nothing was being recorded in this chat; call browser_record with action start first.',
          isError: true,
        };
      if (r.steps.length === 0)
        return {
          output:
            'The recording has no steps (snapshots and screenshots are not kept), so nothing was saved.',
          isError: true,
        };
      const byLength = [...a.params].sort((x, y) => y.value.length - x.value.length);
      const templ = (v: string | undefined) =>
        v === undefined
          ? undefined
          : byLength.reduce((t, p) => t.split(p.value).join(`{{${p.name}}}`), v);
      const steps = r.steps.map((s) =>
        Object.fromEntries(
          Object.entries({ ...s, target: templ(s.target), value: templ(s.value) }).filter(
            ([, v]) => v !== undefined,
          ),
        ),
      );
      const doc = {
        description: a.description ?? '',
        params: a.params.map((p) => ({
          name: p.name,
          ...(p.description ? { description: p.description } : {}),
          default: p.value,
        })),
        steps,
      };
      const text = stringify(doc);
      const parsed = parseRecording(text);
      if (!parsed.ok)
        return {
          output: `The recording did not validate: ${parsed.issues[0]?.message}`,
          isError: true,
        };
      writeRecording(ctx.paths.home, a.name, text);
      return {
        output: `Saved the recording "${a.name}" with ${steps.length} steps${a.params.length ? ` and params ${a.params.map((p) => p.name).join(', ')}` : ''}:\n${text}`,
      };
    },
  });
  return [browser, replay, record];
}
