import { z } from 'zod';
import { displayPath, resolveToolPath } from '../files/file-path.js';
import { defineTool, type ToolContext } from '../registry.js';
import { runGrep } from './search-pool.js';
import {
  checkRoot,
  SEARCH_LIMITS,
  searchSkips,
  stopNote,
  withSearchDeadline,
} from './search-common.js';
import type { GrepResult } from './search-types.js';

/** Flags for a pattern, or the reason it is not a valid regular expression. */
function regexFlags(
  pattern: string,
  caseInsensitive: boolean,
): { flags: string } | { error: string } {
  const base = caseInsensitive ? 'i' : '';
  try {
    new RegExp(pattern, `${base}u`); // unicode mode when the pattern allows it (\p{L}, astral characters)
    return { flags: `${base}u` };
  } catch {
    try {
      new RegExp(pattern, base);
      return { flags: base };
    } catch (err) {
      return { error: `The pattern is not a valid regular expression: ${(err as Error).message}` };
    }
  }
}

export const grepTool = defineTool({
  name: 'grep',
  purpose: 'Searches the contents of files for a word or pattern.',
  description:
    'Searches file contents for a regular expression (JavaScript syntax), line by line, and returns `path:line:text` ' +
    '(context lines as `path-line-text`, groups separated by `--`). Honours .gitignore, skips node_modules, .git and binary files. ' +
    `At most ${SEARCH_LIMITS.defaultResults} matching lines unless max_results says otherwise; long lines are cut.`,
  args: z
    .object({
      pattern: z.string().min(1).max(2000).describe('Regular expression, e.g. function\\s+\\w+'),
      path: z
        .string()
        .min(1)
        .max(4096)
        .optional()
        .describe('Folder or file to search (default: the working folder)'),
      glob: z
        .string()
        .min(1)
        .max(1000)
        .optional()
        .describe('Only files matching this glob, e.g. *.ts or src/**/*.py'),
      case_insensitive: z.boolean().optional(),
      context_lines: z
        .number()
        .int()
        .min(0)
        .max(10)
        .optional()
        .describe('Lines to show before and after each match'),
      max_results: z
        .number()
        .int()
        .min(1)
        .max(SEARCH_LIMITS.maxResults)
        .optional()
        .describe(`Most matching lines to return (default ${SEARCH_LIMITS.defaultResults})`),
    })
    .strict(),
  subject: (args, ctx) => ({ path: resolveToolPath(ctx, args.path ?? '.') }),
  run: async (args, ctx) => {
    const root = resolveToolPath(ctx, args.path ?? '.');
    const bad = checkRoot(ctx, root, true);
    if (bad) return { output: bad, isError: true };
    const re = regexFlags(args.pattern, args.case_insensitive === true);
    if ('error' in re) return { output: re.error, isError: true };
    const context = args.context_lines ?? 0;
    const r = await withSearchDeadline(ctx, 'grep', (signal) =>
      runGrep(
        {
          root,
          pattern: args.pattern,
          flags: re.flags,
          include: args.glob?.replace(/^(\.\/)+/, '') ?? null,
          context,
          maxResults: args.max_results ?? SEARCH_LIMITS.defaultResults,
          maxFiles: SEARCH_LIMITS.maxFiles,
          maxLineChars: SEARCH_LIMITS.maxLineChars,
          maxFileBytes: SEARCH_LIMITS.maxFileBytes,
          timeMs: SEARCH_LIMITS.timeMs,
          skip: searchSkips(ctx.paths),
        },
        signal,
      ),
    );
    if ('output' in r) return r;
    return { output: formatGrep(ctx, r, context) };
  },
});

/** ripgrep-like lines, then notes on what was capped or skipped. */
export function formatGrep(
  ctx: Pick<ToolContext, 'workingDir'>,
  r: GrepResult,
  context: number,
): string {
  const out: string[] = [];
  for (const f of r.files) {
    const shown = displayPath(ctx, f.path);
    let prev = -1;
    if (context > 0 && out.length > 0) out.push('--');
    for (const l of f.lines) {
      if (context > 0 && prev !== -1 && l.n !== prev + 1) out.push('--');
      const s = l.match ? ':' : '-';
      out.push(`${shown}${s}${l.n}${s}${l.text}`);
      prev = l.n;
    }
  }
  if (r.files.length === 0) out.push('(no matches)');
  else
    out.push(
      `[${r.matches} matching line${r.matches === 1 ? '' : 's'} in ${r.files.length} file${r.files.length === 1 ? '' : 's'}]`,
    );
  if (r.capped)
    out.push(
      `[stopped at ${r.matches} matches; there may be more: narrow the pattern, path or glob, or raise max_results]`,
    );
  out.push(...stopNote(r.stopped, r.scanned));
  const skipped = [
    r.skippedBinary > 0 ? `${r.skippedBinary} binary` : '',
    r.skippedLarge > 0
      ? `${r.skippedLarge} over ${SEARCH_LIMITS.maxFileBytes / 1024 / 1024} MiB`
      : '',
  ].filter(Boolean);
  if (skipped.length > 0) out.push(`[skipped files: ${skipped.join(', ')}]`);
  return out.join('\n');
}
