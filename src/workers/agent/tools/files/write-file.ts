import { z } from 'zod';
import { displayPath, resolveToolPath, svcPrivatePath } from './file-path.js';
import { checkWritable, commitWrite } from './file-guard.js';
import { defineTool } from '../registry.js';
import { countLines, formatBytes, MAX_TEXT_FILE_BYTES } from './text-file.js';

export const writeFileTool = defineTool({
  name: 'write_file',
  purpose: "Creates a file, or replaces one's whole content.",
  description:
    'Writes a whole text file, creating missing parent folders. To replace an existing file you must have read it ' +
    'with read_file in this session and it must be unchanged since; its previous content goes to the trash. ' +
    'Prefer edit_file for changing part of a file.',
  args: z
    .object({
      path: z
        .string()
        .min(1)
        .max(4096)
        .describe('File path, absolute or relative to the working folder'),
      content: z.string().max(MAX_TEXT_FILE_BYTES).describe('The complete new content'),
    })
    .strict(),
  subject: (args, ctx) => ({ path: resolveToolPath(ctx, args.path) }),
  run: ({ path, content }, ctx) => {
    ctx.signal.throwIfAborted();
    const abs = resolveToolPath(ctx, path);
    const shown = displayPath(ctx, abs);
    const refused = svcPrivatePath(ctx.paths, abs, 'write');
    if (refused) return { output: refused, isError: true };
    if (Buffer.byteLength(content) > MAX_TEXT_FILE_BYTES)
      return {
        output: `The content is over the ${formatBytes(MAX_TEXT_FILE_BYTES)} limit of write_file.`,
        isError: true,
      };
    const check = checkWritable(ctx, abs, shown);
    if (!check.ok) return { output: check.message, isError: true };
    const done = commitWrite(ctx, abs, check.existing, content, 'write_file');
    const lines = countLines(content);
    const stats = `${formatBytes(done.size)}, ${lines} line${lines === 1 ? '' : 's'}`;
    if (done.unchanged)
      return { output: `${shown} already had exactly this content (${stats}); nothing changed.` };
    const verb = check.existing ? 'Overwrote' : 'Created';
    const trash = done.trashId ? ` The previous content is in the trash (${done.trashId}).` : '';
    return { output: `${verb} ${shown} (${stats}).${trash}`, wrote: [abs] };
  },
});
