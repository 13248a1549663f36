import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { writeFileAtomic } from '../atomic-write.js';
import { recordingIssueSchema } from '../protocol/answers/browser.js';
import { browserActions, browserStepSchema, type BrowserStep } from './steps.js';

/**
 * A recording: a YAML file in $SVC_HOME/browser/recordings/<name>.yml with a description, params
 * (name, description, default) and steps ({action, target, value} with {{param}} placeholders).
 */
export const recordingNameSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/,
    'a recording name is 1-64 letters, digits, dots, dashes or underscores, not starting with a dot (never a path)',
  );

const paramSchema = z.strictObject({
  name: z
    .string()
    .regex(
      /^[A-Za-z_][A-Za-z0-9_]{0,63}$/,
      'a param name is letters, digits and underscores, not starting with a digit',
    ),
  description: z.string().max(2000).optional(),
  default: z.union([z.string(), z.number(), z.boolean()]).transform(String).optional(),
});

export const recordingSchema = z.strictObject({
  description: z.string().max(2000).default(''),
  params: z.array(paramSchema).max(50).default([]),
  steps: z.array(browserStepSchema).min(1, 'a recording has at least one step').max(500),
});
export type Recording = z.infer<typeof recordingSchema>;

export const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

export type RecordingIssue = z.infer<typeof recordingIssueSchema>;

export type ParsedRecording =
  | { ok: true; recording: Recording }
  | { ok: false; kind: 'yaml' | 'schema'; issues: RecordingIssue[] };

/** Parses and validates a recording's YAML; every failure says where. */
export function parseRecording(text: string): ParsedRecording {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      kind: 'yaml',
      issues: doc.errors.map((e) => {
        const pos = lc.linePos(e.pos[0]);
        return {
          message: e.message.split('\n')[0] ?? e.message,
          path: '',
          line: pos.line,
          column: pos.col,
        };
      }),
    };
  }
  const where = (path: PropertyKey[]): { line: number | null; column: number | null } => {
    for (let n = path.length; n >= 0; n--) {
      const node = doc.getIn(path.slice(0, n) as (string | number)[], true) as
        | { range?: [number, number, number] }
        | undefined;
      if (node && typeof node === 'object' && node.range) {
        const pos = lc.linePos(node.range[0]);
        return { line: pos.line, column: pos.col };
      }
    }
    return { line: null, column: null };
  };
  const r = recordingSchema.safeParse(doc.toJS());
  if (!r.success) {
    return {
      ok: false,
      kind: 'schema',
      issues: r.error.issues.map((i) => {
        const step =
          i.path[0] === 'steps' && typeof i.path[1] === 'number' ? i.path[1] + 1 : undefined;
        const field = i.path
          .slice(step !== undefined ? 2 : 0)
          .map(String)
          .join('.');
        const msg =
          i.code === 'unrecognized_keys'
            ? `unknown field${i.keys.length > 1 ? 's' : ''} ${i.keys.join(', ')}`
            : i.code === 'invalid_value' && i.path.at(-1) === 'action'
              ? `unknown action; one of ${browserActions.join(', ')}`
              : i.message;
        return {
          message:
            step !== undefined
              ? `step ${step}${field ? `, ${field}` : ''}: ${msg}`
              : `${field || '(document)'}: ${msg}`,
          path: i.path.map(String).join('.'),
          ...where(i.path),
          ...(step !== undefined ? { step } : {}),
        };
      }),
    };
  }
  // Every placeholder names a declared param.
  const declared = new Set(r.data.params.map((p) => p.name));
  const issues: RecordingIssue[] = [];
  r.data.steps.forEach((s, i) => {
    for (const field of ['target', 'value'] as const) {
      for (const m of (s[field] ?? '').matchAll(PLACEHOLDER)) {
        if (!declared.has(m[1]!))
          issues.push({
            message: `step ${i + 1}, ${field}: {{${m[1]}}} is not a declared param (add it under params)`,
            path: `steps.${i}.${field}`,
            step: i + 1,
            ...where(['steps', i, field]),
          });
      }
    }
  });
  return issues.length > 0
    ? { ok: false, kind: 'schema', issues }
    : { ok: true, recording: r.data };
}

/** The steps with {{param}} filled from `given`, else each param's default; a missing one is an error sentence. */
export function fillParams(
  rec: Recording,
  given: Record<string, string>,
): { steps: BrowserStep[] } | { error: string } {
  const values = new Map<string, string>();
  for (const p of rec.params) {
    const v = given[p.name] ?? p.default;
    if (v !== undefined) values.set(p.name, v);
  }
  const unknown = Object.keys(given).filter((k) => !rec.params.some((p) => p.name === k));
  if (unknown.length > 0)
    return {
      error: `the recording has no param ${unknown.join(', ')}; its params: ${rec.params.map((p) => p.name).join(', ') || 'none'}`,
    };
  const missing = rec.params.filter((p) => !values.has(p.name)).map((p) => p.name);
  if (missing.length > 0) return { error: `give a value for ${missing.join(', ')} (no default)` };
  const fill = (s: string | undefined) =>
    s?.replace(PLACEHOLDER, (_, name: string) => values.get(name) ?? '');
  return {
    steps: rec.steps.map((s) => ({
      ...s,
      ...(s.target !== undefined ? { target: fill(s.target) } : {}),
      ...(s.value !== undefined ? { value: fill(s.value) } : {}),
    })),
  };
}

export function recordingsDir(home: string): string {
  return join(home, 'browser', 'recordings');
}

export function recordingFile(home: string, name: string): string {
  return join(recordingsDir(home), `${recordingNameSchema.parse(name)}.yml`);
}

/** The recordings on disk, by name (files that do not parse are listed with their error). */
export function listRecordingNames(home: string): string[] {
  const dir = recordingsDir(home);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yml') && recordingNameSchema.safeParse(f.slice(0, -4)).success)
    .map((f) => f.slice(0, -4))
    .sort();
}

export function readRecording(home: string, name: string): string | null {
  try {
    return readFileSync(recordingFile(home, name), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

export function writeRecording(home: string, name: string, text: string): void {
  mkdirSync(recordingsDir(home), { recursive: true, mode: 0o700 });
  writeFileAtomic(recordingFile(home, name), text);
}
