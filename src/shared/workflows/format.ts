import { LineCounter, parseDocument, type Document } from 'yaml';
import { z } from 'zod';
import { own } from '../own.js';

/**
 * A workflow is a YAML file: a description, typed inputs, and steps. A step is an agent prompt
 * (`prompt`, optionally on the `lite` or `default` model slot), a shell command (`run`) or one
 * tool call (`tool` + `args`). `needs` orders steps; `{{inputs.x}}` and `{{steps.<id>.output}}`
 * carry values into a step's text.
 */

export const WORKFLOW_NAME = /^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,63}$/;
const STEP_ID = /^[a-z][a-z0-9_]{0,39}$/;
const INPUT_NAME = /^[a-z][a-z0-9_]{0,39}$/;
/** Every `{{ ... }}` in a text; what is inside decides whether it is a known placeholder. */
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const KNOWN = /^(?:inputs\.([a-z][a-z0-9_]*)|steps\.([a-z][a-z0-9_]*)\.output)$/;

const inputSchema = z.strictObject({
  description: z.string().max(500).optional(),
  type: z.enum(['string', 'number', 'boolean']).default('string'),
  required: z.boolean().default(false),
  default: z.union([z.string(), z.number(), z.boolean()]).optional(),
});

const stepSchema = z.strictObject({
  id: z
    .string()
    .regex(
      STEP_ID,
      'a step id is 1-40 lowercase letters, digits or underscores, starting with a letter',
    ),
  needs: z.array(z.string()).max(50).default([]),
  prompt: z.string().min(1).max(50_000).optional(),
  model: z.enum(['default', 'lite']).optional(),
  run: z.string().min(1).max(50_000).optional(),
  timeout_seconds: z.number().int().min(1).max(600).optional(),
  tool: z.string().min(1).max(100).optional(),
  args: z.record(z.string(), z.unknown()).optional(),
});

export const workflowSchema = z
  .strictObject({
    description: z.string().trim().min(1, 'a workflow needs a description').max(1000),
    inputs: z
      .record(
        z
          .string()
          .regex(
            INPUT_NAME,
            'an input name is lowercase letters, digits or underscores, starting with a letter',
          ),
        inputSchema,
      )
      .default({}),
    steps: z.array(stepSchema).min(1, 'a workflow needs at least one step').max(50),
  })
  .superRefine((wf, ctx) => {
    const ids = new Map<string, number>();
    wf.steps.forEach((s, i) => {
      const kinds = [s.prompt, s.run, s.tool].filter((k) => k !== undefined).length;
      if (kinds !== 1)
        ctx.addIssue({
          code: 'custom',
          path: ['steps', i],
          message:
            'a step has exactly one of prompt (an agent turn), run (a shell command) or tool (one tool call)',
        });
      if (s.model !== undefined && s.prompt === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['steps', i, 'model'],
          message: 'model applies to prompt steps only',
        });
      if (s.args !== undefined && s.tool === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['steps', i, 'args'],
          message: 'args applies to tool steps only',
        });
      if (s.timeout_seconds !== undefined && s.run === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['steps', i, 'timeout_seconds'],
          message: 'timeout_seconds applies to run steps only',
        });
      if (ids.has(s.id))
        ctx.addIssue({
          code: 'custom',
          path: ['steps', i, 'id'],
          message: `the step id "${s.id}" is used twice`,
        });
      ids.set(s.id, i);
    });
    wf.steps.forEach((s, i) => {
      s.needs.forEach((n, j) => {
        if (!ids.has(n))
          ctx.addIssue({
            code: 'custom',
            path: ['steps', i, 'needs', j],
            message: `needs names "${n}", which is not a step of this workflow`,
          });
        else if (n === s.id)
          ctx.addIssue({
            code: 'custom',
            path: ['steps', i, 'needs', j],
            message: 'a step cannot need itself',
          });
      });
    });
    const cycle = findCycle(wf.steps);
    if (cycle) {
      ctx.addIssue({
        code: 'custom',
        path: ['steps', ids.get(cycle[0]!) ?? 0, 'needs'],
        message: `the needs form a cycle: ${cycle.join(' → ')}`,
      });
      return;
    }
    wf.steps.forEach((s, i) => {
      const before = ancestors(wf.steps, s.id);
      for (const [field, text] of stepTexts(s)) {
        for (const m of text.matchAll(PLACEHOLDER)) {
          const k = KNOWN.exec(m[1] ?? '');
          const path = ['steps', i, ...field];
          if (!k)
            ctx.addIssue({
              code: 'custom',
              path,
              message: `unknown placeholder ${m[0]}; use {{inputs.<name>}} or {{steps.<id>.output}}`,
            });
          else if (k[1] !== undefined && !Object.hasOwn(wf.inputs, k[1]))
            ctx.addIssue({
              code: 'custom',
              path,
              message: `${m[0]} names an input that is not declared under inputs`,
            });
          else if (k[2] !== undefined && !before.has(k[2]))
            ctx.addIssue({
              code: 'custom',
              path,
              message: `${m[0]} uses the output of "${k[2]}", which this step does not need (add it to needs)`,
            });
        }
      }
    });
  });

export type Workflow = z.infer<typeof workflowSchema>;
export type WorkflowStep = Workflow['steps'][number];
export type StepKind = 'prompt' | 'run' | 'tool';

export function stepKind(s: WorkflowStep): StepKind {
  return s.prompt !== undefined ? 'prompt' : s.run !== undefined ? 'run' : 'tool';
}

/** Where an error is: its line in the file, the field path, and what is wrong. */
export const workflowErrorSchema = z.object({
  line: z.number().int().nullable(),
  field: z.string(),
  message: z.string(),
});
export type WorkflowError = z.infer<typeof workflowErrorSchema>;

export type ParsedWorkflow = { ok: true; workflow: Workflow } | { ok: false; error: WorkflowError };

/** Parses and validates a workflow file; the first problem comes with its line and field. */
export function parseWorkflow(text: string): ParsedWorkflow {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const syntax = doc.errors[0];
  if (syntax) {
    const line = syntax.linePos?.[0]?.line ?? lines.linePos(syntax.pos[0]).line;
    return {
      ok: false,
      error: { line, field: '(yaml)', message: syntax.message.split('\n')[0] ?? 'invalid YAML' },
    };
  }
  const parsed = workflowSchema.safeParse(doc.toJS());
  if (parsed.success) return { ok: true, workflow: parsed.data };
  const issue = parsed.error.issues[0]!;
  const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
  return {
    ok: false,
    error: {
      line: lineOf(doc, lines, path),
      field: path.join('.') || '(file)',
      message: issue.message,
    },
  };
}

/** The line of the deepest node on the path that exists (a missing key points at its parent). */
function lineOf(doc: Document, lines: LineCounter, path: Array<string | number>): number | null {
  for (let n = path.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
    const range = (node as { range?: [number, number, number] } | undefined)?.range;
    if (range) return lines.linePos(range[0]).line;
  }
  return null;
}

function stepTexts(s: WorkflowStep): Array<[Array<string | number>, string]> {
  const out: Array<[Array<string | number>, string]> = [];
  if (s.prompt !== undefined) out.push([['prompt'], s.prompt]);
  if (s.run !== undefined) out.push([['run'], s.run]);
  const walk = (v: unknown, path: Array<string | number>) => {
    if (typeof v === 'string') out.push([path, v]);
    else if (Array.isArray(v)) for (const [i, x] of v.entries()) walk(x, [...path, i]);
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
  };
  if (s.args) walk(s.args, ['args']);
  return out;
}

function findCycle(steps: WorkflowStep[]): string[] | undefined {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (id: string): string[] | undefined => {
    if (state.get(id) === 'done') return undefined;
    if (state.get(id) === 'open') return [...stack.slice(stack.indexOf(id)), id];
    state.set(id, 'open');
    stack.push(id);
    for (const n of byId.get(id)?.needs ?? []) {
      if (!byId.has(n)) continue;
      const c = visit(n);
      if (c) return c;
    }
    stack.pop();
    state.set(id, 'done');
    return undefined;
  };
  for (const s of steps) {
    const c = visit(s.id);
    if (c) return c;
  }
  return undefined;
}

/** Every step a step needs, directly or through others. */
function ancestors(steps: WorkflowStep[], id: string): Set<string> {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const out = new Set<string>();
  const todo = [...(byId.get(id)?.needs ?? [])];
  while (todo.length) {
    const n = todo.pop()!;
    if (out.has(n)) continue;
    out.add(n);
    todo.push(...(byId.get(n)?.needs ?? []));
  }
  return out;
}

/**
 * Fills `{{inputs.x}}` and `{{steps.id.output}}` (validation has made sure each one is known).
 * `quote` wraps each value (run steps pass shellQuote, so a value is always one shell word).
 */
export function render(
  text: string,
  values: { inputs: Record<string, string | number | boolean>; outputs: Record<string, string> },
  quote: (v: string) => string = (v) => v,
): string {
  return text.replace(PLACEHOLDER, (whole, inner: string) => {
    const k = KNOWN.exec(inner);
    if (!k) return whole;
    return quote(
      k[1] !== undefined
        ? String(own(values.inputs, k[1]) ?? '')
        : (own(values.outputs, k[2]!) ?? ''),
    );
  });
}

/** One POSIX shell word holding exactly `v`. */
export function shellQuote(v: string): string {
  return `'${v.replace(/'/g, `'\\''`)}'`;
}

/** render() over every string inside a tool step's args. */
export function renderDeep(v: unknown, values: Parameters<typeof render>[1]): unknown {
  if (typeof v === 'string') return render(v, values);
  if (Array.isArray(v)) return v.map((x) => renderDeep(x, values));
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, renderDeep(x, values)]));
  return v;
}

/** Steps in the order they run: each one once every step it needs is done, ties in file order. */
export function runOrder(steps: WorkflowStep[]): WorkflowStep[] {
  const done = new Set<string>();
  const out: WorkflowStep[] = [];
  while (out.length < steps.length) {
    const next = steps.find((s) => !done.has(s.id) && s.needs.every((n) => done.has(n)));
    if (!next) break; // a cycle; validation refuses those
    done.add(next.id);
    out.push(next);
  }
  return out;
}
