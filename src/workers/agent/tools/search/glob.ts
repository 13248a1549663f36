import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { displayPath, resolveToolPath } from '../files/file-path.js';
import { isLiteralSegment } from './glob-pattern.js';
import { defineTool, type ToolContext } from '../registry.js';
import { runGlob } from './search-pool.js';
import {
  checkRoot,
  SEARCH_LIMITS,
  searchSkips,
  stopNote,
  withSearchDeadline,
} from './search-common.js';

/**
 * Moves the pattern's leading literal folders into the root (`src/**\/*.ts` walks only src),
 * and notes whether the pattern names a path (has a slash) or just a file name at any depth.
 */
export function splitPattern(
  ctx: Pick<ToolContext, 'workingDir'>,
  pattern: string,
  path: string | undefined,
): { root: string; pattern: string; anchored: boolean } {
  let p = pattern.replace(/^(\.\/)+/, '');
  let root = isAbsolute(p) ? '/' : resolveToolPath(ctx, path ?? '.');
  if (isAbsolute(p)) p = p.replace(/^\/+/, '');
  const anchored = p.includes('/');
  const segs = p.split('/');
  let i = 0;
  while (i < segs.length - 1 && isLiteralSegment(segs[i]!)) i++;
  root = join(root, ...segs.slice(0, i));
  return { root, pattern: segs.slice(i).join('/'), anchored };
}

export const globTool = defineTool({
  name: 'glob',
  purpose: 'Finds files by name, such as every *.ts file in a folder.',
  description:
    'Finds files by name pattern, newest first. `*` and `?` match within a name, `**` across folders, `{a,b}` either. ' +
    'A pattern without a slash matches file names at any depth (`*.ts`); with a slash it matches the path below `path` (`src/**/*.test.ts`). ' +
    `Honours .gitignore, skips node_modules and .git, returns at most ${SEARCH_LIMITS.defaultResults} files.`,
  args: z
    .object({
      pattern: z.string().min(1).max(1000).describe('Glob pattern, e.g. **/*.md or src/*.ts'),
      path: z
        .string()
        .min(1)
        .max(4096)
        .optional()
        .describe('Folder to search (default: the working folder)'),
    })
    .strict(),
  subject: (args, ctx) => ({ path: splitPattern(ctx, args.pattern, args.path).root }),
  run: async (args, ctx) => {
    const { root, pattern, anchored } = splitPattern(ctx, args.pattern, args.path);
    const bad = checkRoot(ctx, root, false);
    if (bad) return { output: bad, isError: true };
    const r = await withSearchDeadline(ctx, 'glob', (signal) =>
      runGlob(
        {
          root,
          pattern,
          anchored,
          maxFiles: SEARCH_LIMITS.maxFiles,
          maxResults: SEARCH_LIMITS.defaultResults,
          timeMs: SEARCH_LIMITS.timeMs,
          skip: searchSkips(ctx.paths),
        },
        signal,
      ),
    );
    if ('output' in r) return r;
    const notes = stopNote(r.stopped, r.scanned);
    if (r.total === 0)
      return {
        output: [`No files match ${args.pattern} in ${displayPath(ctx, root)}.`, ...notes].join(
          '\n',
        ),
      };
    const lines = r.files.map((f) => displayPath(ctx, f.path));
    if (r.total > r.files.length)
      notes.unshift(
        `[${r.files.length} of ${r.total} files shown, newest first; narrow the pattern or path to see the rest]`,
      );
    return { output: [...lines, ...notes].join('\n') };
  },
});
