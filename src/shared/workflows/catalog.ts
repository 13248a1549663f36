import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Paths } from '../paths.js';
import type { Db } from '../store/db.js';
import { packageRoot } from '../version.js';
import {
  parseWorkflow,
  stepKind,
  WORKFLOW_NAME,
  type Workflow,
  type WorkflowError,
} from './format.js';
import { lastRun, type WorkflowRun } from './runs.js';

export const builtinWorkflowsDir = join(packageRoot, 'builtin', 'workflows');
const FILE_MAX = 256 * 1024;

export function userWorkflowsDir(paths: Pick<Paths, 'home'>): string {
  return join(paths.home, 'workflows');
}

export interface WorkflowEntry {
  name: string;
  source: 'builtin' | 'user';
  file: string;
  /** Set when valid. */
  workflow: Workflow | null;
  error: WorkflowError | null;
}

/** Every workflow file, read fresh; a user file hides a built-in of the same name. Invalid ones are kept, with their error. */
export function loadWorkflows(paths: Pick<Paths, 'home'>): WorkflowEntry[] {
  const byName = new Map<string, WorkflowEntry>();
  for (const [dir, source] of [
    [builtinWorkflowsDir, 'builtin'],
    [userWorkflowsDir(paths), 'user'],
  ] as const) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const f of names.sort()) {
      const m = /^(.+)\.ya?ml$/.exec(f);
      if (!m || f.startsWith('.')) continue;
      byName.set(m[1]!, readEntry(join(dir, f), m[1]!, source));
    }
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

export function findWorkflow(paths: Pick<Paths, 'home'>, name: string): WorkflowEntry | undefined {
  return loadWorkflows(paths).find((w) => w.name === name);
}

function readEntry(file: string, name: string, source: 'builtin' | 'user'): WorkflowEntry {
  const base = { name, source, file, workflow: null };
  if (!WORKFLOW_NAME.test(name))
    return {
      ...base,
      error: {
        line: null,
        field: '(file name)',
        message: `"${name}" is not a safe workflow name (lowercase letters, digits and single hyphens)`,
      },
    };
  try {
    if (statSync(file).size > FILE_MAX)
      return {
        ...base,
        error: {
          line: null,
          field: '(file)',
          message: `the file is larger than ${FILE_MAX} bytes`,
        },
      };
    const parsed = parseWorkflow(readFileSync(file, 'utf8'));
    return parsed.ok
      ? { ...base, workflow: parsed.workflow, error: null }
      : { ...base, error: parsed.error };
  } catch (err) {
    return {
      ...base,
      error: { line: null, field: '(file)', message: `cannot be read: ${(err as Error).message}` },
    };
  }
}

/** A workflow as GET /api/workflows shows it. */
export function workflowView(db: Db, w: WorkflowEntry) {
  const run: WorkflowRun | undefined = lastRun(db, w.name);
  return {
    name: w.name,
    description: w.workflow?.description ?? '',
    source: w.source,
    valid: w.workflow !== null,
    why: w.error
      ? `${w.error.line === null ? '' : `line ${w.error.line}, `}${w.error.field}: ${w.error.message}`
      : null,
    error: w.error,
    inputs: w.workflow?.inputs ?? {},
    steps: (w.workflow?.steps ?? []).map((s) => ({
      id: s.id,
      kind: stepKind(s),
      needs: s.needs,
      ...(s.model ? { model: s.model } : {}),
    })),
    last_run: run
      ? {
          id: run.id,
          status: run.status,
          session_id: run.session_id,
          started_at: run.started_at,
          ended_at: run.ended_at,
          failed_step: run.failed_step,
          error: run.error,
        }
      : null,
  };
}
