import { z } from 'zod';
import { recordFileRead } from '../../../../shared/store/file-reads.js';
import { displayPath, resolveToolPath, svcPrivatePath } from './file-path.js';
import { defineTool } from '../registry.js';
import { loadTextFile } from './text-file.js';

const DEFAULT_LINES = 2000;
const MAX_LINES = 10_000;
const MAX_LINE_CHARS = 2000;
/** Keeps one call's output reasonable even when every line is long. */
const MAX_OUTPUT_CHARS = 256 * 1024;

export const readFileTool = defineTool({
  name: 'read_file',
  purpose: 'Reads a file, or a part of a long one.',
  description:
    'Reads a text file and returns its lines numbered like `cat -n`. Use offset_line (1-based) and limit_lines ' +
    `(default ${DEFAULT_LINES}, max ${MAX_LINES}) to read a long file in parts. Binary files and files over 10 MiB are refused. ` +
    'A file must be read before write_file or edit_file may change it. Relative paths start at the working folder.',
  args: z
    .object({
      path: z
        .string()
        .min(1)
        .max(4096)
        .describe('File path, absolute or relative to the working folder'),
      offset_line: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe('First line to show, 1-based (default 1)'),
      limit_lines: z
        .number()
        .int()
        .min(1)
        .max(MAX_LINES)
        .optional()
        .describe(`How many lines to show (default ${DEFAULT_LINES})`),
    })
    .strict(),
  subject: (args, ctx) => ({ path: resolveToolPath(ctx, args.path) }),
  run: (args, ctx) => {
    const abs = resolveToolPath(ctx, args.path);
    const shown = displayPath(ctx, abs);
    const refused = svcPrivatePath(ctx.paths, abs, 'read');
    if (refused) return { output: refused, isError: true };
    const loaded = loadTextFile(abs, shown);
    if (!loaded.ok) return { output: loaded.message, isError: true };
    const { file } = loaded;
    recordFileRead(ctx.db, {
      session_id: ctx.sessionId,
      path: abs,
      sha256: file.sha256,
      size: file.size,
      mtime_ms: file.mtimeMs,
    });
    return {
      output: numbered(
        file.buf.toString('utf8'),
        args.offset_line ?? 1,
        args.limit_lines ?? DEFAULT_LINES,
      ),
    };
  },
});

/** The requested lines, numbered, with a footer saying whether and where the file goes on. */
function numbered(text: string, start: number, limit: number): string {
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const total = lines.length;
  if (total === 0) return '[empty file]';
  if (start > total)
    return `[offset_line ${start} is past the end: the file has ${total} line${total === 1 ? '' : 's'}]`;
  const last = Math.min(total, start + limit - 1);
  const out: string[] = [];
  let chars = 0;
  let shownTo = start - 1;
  for (let n = start; n <= last; n++) {
    let line = lines[n - 1]!.replace(/\r$/, '');
    if (line.length > MAX_LINE_CHARS)
      line = `${line.slice(0, MAX_LINE_CHARS)}… [line cut: ${line.length} characters in all]`;
    const row = `${String(n).padStart(6)}\t${line}`;
    if (chars + row.length > MAX_OUTPUT_CHARS && out.length > 0) break;
    out.push(row);
    chars += row.length + 1;
    shownTo = n;
  }
  if (shownTo < total) {
    const why = shownTo < last ? 'the output limit was reached' : 'the file continues';
    out.push(
      `[lines ${start}–${shownTo} of ${total} shown; ${why}: read on with offset_line=${shownTo + 1}]`,
    );
  } else {
    out.push(`[end of file: ${total} line${total === 1 ? '' : 's'}]`);
  }
  return out.join('\n');
}
