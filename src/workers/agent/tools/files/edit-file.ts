import { z } from 'zod';
import { displayPath, resolveToolPath, svcPrivatePath } from './file-path.js';
import { checkWritable, commitWrite } from './file-guard.js';
import { defineTool } from '../registry.js';

export const editFileTool = defineTool({
  name: 'edit_file',
  purpose: 'Changes part of a file by replacing a piece of text.',
  description:
    'Replaces old_text with new_text in a text file you have read in this session (and that is unchanged since). ' +
    'old_text must match the file exactly, whitespace included, and occur exactly once, unless replace_all is true. ' +
    'The previous content goes to the trash.',
  args: z
    .object({
      path: z
        .string()
        .min(1)
        .max(4096)
        .describe('File path, absolute or relative to the working folder'),
      old_text: z.string().min(1).describe('The exact text to replace'),
      new_text: z.string().describe('What replaces it'),
      replace_all: z
        .boolean()
        .optional()
        .describe('Replace every occurrence (default false: old_text must be unique)'),
    })
    .strict(),
  subject: (args, ctx) => ({ path: resolveToolPath(ctx, args.path) }),
  run: ({ path, old_text, new_text, replace_all }, ctx) => {
    ctx.signal.throwIfAborted();
    const abs = resolveToolPath(ctx, path);
    const shown = displayPath(ctx, abs);
    const refused = svcPrivatePath(ctx.paths, abs, 'write');
    if (refused) return { output: refused, isError: true };
    if (old_text === new_text)
      return {
        output: 'old_text and new_text are the same; there is nothing to change.',
        isError: true,
      };
    const check = checkWritable(ctx, abs, shown);
    if (!check.ok) return { output: check.message, isError: true };
    if (!check.existing)
      return { output: `${shown} does not exist; use write_file to create it.`, isError: true };
    let text: string;
    try {
      // ignoreBOM keeps a byte-order mark as a character, so it is written back as it was.
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(check.existing.buf);
    } catch {
      return {
        output: `${shown} contains bytes that are not UTF-8 text; edit_file would damage them.`,
        isError: true,
      };
    }
    let [from, to] = [old_text, new_text];
    let at = positions(text, from);
    // A file with CRLF line ends: the model writes \n, so try the same text with \r\n.
    if (at.length === 0 && text.includes('\r\n') && from.includes('\n') && !from.includes('\r')) {
      [from, to] = [from.replace(/\n/g, '\r\n'), to.replace(/\n/g, '\r\n')];
      at = positions(text, from);
    }
    if (at.length === 0) {
      return {
        output: `old_text was not found in ${shown}. It must match the file exactly, including whitespace and indentation; read the file again and copy the text.`,
        isError: true,
      };
    }
    const lines = lineNumbers(text, at);
    if (at.length > 1 && replace_all !== true) {
      return {
        output: `old_text occurs ${at.length} times in ${shown} (lines ${lines}). Include more surrounding text to make it unique, or set replace_all to true to replace every occurrence.`,
        isError: true,
      };
    }
    const done = commitWrite(ctx, abs, check.existing, text.split(from).join(to), 'edit_file');
    const trash = done.trashId ? ` The previous content is in the trash (${done.trashId}).` : '';
    return {
      output: `Edited ${shown}: replaced ${at.length} occurrence${at.length === 1 ? '' : 's'} (line${at.length === 1 ? '' : 's'} ${lines}).${trash}`,
      wrote: [abs],
    };
  },
});

/** Start offsets of the non-overlapping occurrences of `needle`, as split() would cut them. */
function positions(text: string, needle: string): number[] {
  const out: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length))
    out.push(i);
  return out;
}

/** "3, 17, 40" (at most ten, then "…"). */
function lineNumbers(text: string, at: number[]): string {
  const nums: number[] = [];
  let line = 1;
  let from = 0;
  for (const pos of at.slice(0, 10)) {
    for (let i = text.indexOf('\n', from); i !== -1 && i < pos; i = text.indexOf('\n', i + 1))
      line++;
    from = pos;
    nums.push(line);
  }
  return nums.join(', ') + (at.length > 10 ? ', …' : '');
}
