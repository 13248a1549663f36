import { z } from 'zod';

/**
 * One browser action, as the agent's `browser` tool sends it and as a recording keeps it: the
 * action, its target (a ref from the last snapshot like "e12", or a Playwright selector such as
 * `role=button[name="Send"]`, `text=Sign in`, `#email`) and its value (a URL, text, key, option).
 */
export const browserActions = [
  'navigate',
  'snapshot',
  'click',
  'type',
  'press',
  'scroll',
  'select',
  'wait',
  'screenshot',
  'tabs',
  'back',
] as const;
export const browserActionSchema = z.enum(browserActions);
export type BrowserAction = z.infer<typeof browserActionSchema>;

const needs: Record<BrowserAction, { target?: boolean; value?: boolean; hint: string }> = {
  navigate: { value: true, hint: 'value is the URL' },
  snapshot: { hint: '' },
  click: { target: true, hint: 'target is a ref or selector' },
  type: { target: true, value: true, hint: 'target is the field, value the text' },
  press: { value: true, hint: 'value is a key such as Enter or Control+A' },
  scroll: {
    hint: 'value is up, down, top or bottom (default down), or target an element to bring into view',
  },
  select: { target: true, value: true, hint: 'target is the <select>, value the option' },
  wait: { hint: 'target is an element, or value a text to wait for' },
  screenshot: { hint: '' },
  tabs: {
    hint: 'value is list, open, select or close; target the tab number (or the URL to open)',
  },
  back: { hint: '' },
};

export const browserStepSchema = z
  .strictObject({
    action: browserActionSchema,
    target: z.string().min(1).max(2000).optional(),
    value: z.string().max(20_000).optional(),
    /** For wait: how long at most (default 10, at most 120). */
    timeout_seconds: z.number().positive().max(120).optional(),
  })
  .superRefine((s, ctx) => {
    const n = needs[s.action];
    if (n.target && s.target === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['target'],
        message: `${s.action} needs a target (${n.hint})`,
      });
    if (n.value && s.value === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['value'],
        message: `${s.action} needs a value (${n.hint})`,
      });
    if (s.action === 'wait' && s.target === undefined && s.value === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['target'],
        message: 'wait needs a target or a value (a text to wait for)',
      });
    if (
      s.action === 'scroll' &&
      s.value !== undefined &&
      !['up', 'down', 'top', 'bottom'].includes(s.value)
    )
      ctx.addIssue({
        code: 'custom',
        path: ['value'],
        message: 'scroll takes up, down, top or bottom',
      });
    if (
      s.action === 'tabs' &&
      s.value !== undefined &&
      !['list', 'open', 'select', 'close'].includes(s.value)
    )
      ctx.addIssue({
        code: 'custom',
        path: ['value'],
        message: 'tabs takes list, open, select or close',
      });
  });
export type BrowserStep = z.infer<typeof browserStepSchema>;

/** A ref from a snapshot ("e12", "f1e3"), as opposed to a selector. */
export const isRef = (target: string): boolean => /^(f\d+)?e\d+$/.test(target);
