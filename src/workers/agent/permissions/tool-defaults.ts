import { readFileSync } from 'node:fs';
import { isMap, isSeq, parseDocument, type Document } from 'yaml';
import { writeFileAtomic } from '../../../shared/atomic-write.js';
import { IpcCallError } from '../../../shared/protocol/endpoint.js';
import { ALWAYS_ASK, fallbackVerdict } from './defaults.js';
import { emptyRules, parseRules, type RuleSet, type Verdict } from './rules.js';
import { defaultForTool } from './tool-names.js';

/**
 * A tool's default as Settings → Tools shows and switches it: what a call gets when no rule
 * (yours or built-in) decides. Hard limits and the built-in rules stay above it whatever it is.
 */
export interface ToolDefault {
  default: Verdict;
  /** `built-in` (svc's table), or `permissions.yml` when a `- default:` of yours decides. */
  source: 'built-in' | 'permissions.yml';
  /** Why the switch cannot allow this tool, when the engine forbids it; null when it can. */
  locked: string | null;
}

const LOCKED =
  'It always asks: no rule or mode lets it run without you, since it interrupts every chat.';

/** The default a tool has under these rules. */
export function toolDefault(set: RuleSet, tool: string): ToolDefault {
  if (ALWAYS_ASK.has(tool)) return { default: 'ask', source: 'built-in', locked: LOCKED };
  const own = defaultForTool(set, tool);
  return own
    ? { default: own, source: 'permissions.yml', locked: null }
    : { default: fallbackVerdict(tool), source: 'built-in', locked: null };
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw new IpcCallError(
      'conflict',
      `permissions.yml cannot be read (${(err as Error).message}); fix that first.`,
    );
  }
}

/** The rules of permissions.yml, or a conflict naming its problem (a broken file is never rewritten). */
export function readRules(file: string): RuleSet {
  const text = readText(file);
  if (text.trim() === '') return emptyRules();
  const parsed = parseRules(text, 'permissions.yml');
  if (parsed.problem !== undefined)
    throw new IpcCallError(
      'conflict',
      `permissions.yml has a problem, so svc leaves it as it is: ${parsed.problem.split('\n')[0]}. Fix it by hand first.`,
    );
  return parsed.rules;
}

/** Removes the tool's own `- default:` entries; the tool's key goes when nothing is left under it. */
function dropOwnDefault(doc: Document, tool: string): void {
  const list = doc.get(tool, true);
  if (!isSeq(list)) return;
  list.items = list.items.filter((item) => !(isMap(item) && item.has('default')));
  if (list.items.length === 0) doc.delete(tool);
}

/**
 * Makes `verdict` the tool's default in permissions.yml, keeping every other line (comments too).
 * The entry is only written where it changes something: set back to what the tool would have
 * anyway, the entry goes, so terminal's extra care without a sandbox (which any `default` for
 * terminal turns off) comes back. Refused for a tool the engine always asks about.
 */
export function setToolDefault(file: string, tool: string, verdict: 'allow' | 'ask'): ToolDefault {
  if (ALWAYS_ASK.has(tool) && verdict === 'allow') throw new IpcCallError('conflict', LOCKED);
  readRules(file);
  const doc = parseDocument(readText(file));
  if (doc.contents === null || !isMap(doc.contents))
    doc.contents = doc.createNode({}) as unknown as typeof doc.contents;
  dropOwnDefault(doc, tool);
  const without = parseRules(doc.toString(), 'permissions.yml').rules;
  if (toolDefault(without, tool).default !== verdict) {
    const list = doc.get(tool, true);
    if (isSeq(list)) list.add(doc.createNode({ default: verdict }));
    else doc.set(tool, doc.createNode([{ default: verdict }]));
  }
  const next = doc.toString();
  const check = parseRules(next, 'permissions.yml');
  // What is written must read back as meant; anything else is a bug, and the file stays as it was.
  if (check.problem !== undefined || toolDefault(check.rules, tool).default !== verdict)
    throw new IpcCallError(
      'internal',
      'The new rules did not read back as meant; nothing was changed.',
    );
  writeFileAtomic(file, next === '{}\n' ? '' : next);
  return toolDefault(check.rules, tool);
}
