import { lstatSync } from 'node:fs';
import { z } from 'zod';
import { trashFileMove } from '../../../../shared/store/file-trash.js';
import { displayPath, resolveToolPath, svcPrivatePath } from './file-path.js';
import { defineTool } from '../registry.js';

export const deleteFileTool = defineTool({
  name: 'delete_file',
  purpose: 'Moves a file to the trash, from where you can restore it.',
  description:
    'Moves a file to the trash, from where the user can restore it. Folders are refused.',
  args: z
    .object({
      path: z
        .string()
        .min(1)
        .max(4096)
        .describe('File path, absolute or relative to the working folder'),
    })
    .strict(),
  subject: (args, ctx) => ({ path: resolveToolPath(ctx, args.path) }),
  run: ({ path }, ctx) => {
    ctx.signal.throwIfAborted();
    const abs = resolveToolPath(ctx, path);
    const shown = displayPath(ctx, abs);
    const refused = svcPrivatePath(ctx.paths, abs, 'write');
    if (refused) return { output: refused, isError: true };
    let st;
    try {
      st = lstatSync(abs);
    } catch {
      return { output: `${shown} does not exist.`, isError: true };
    }
    if (st.isDirectory())
      return { output: `${shown} is a folder; delete_file only deletes files.`, isError: true };
    if (st.isSymbolicLink())
      return {
        output: `${shown} is a symbolic link; delete_file only deletes regular files.`,
        isError: true,
      };
    if (!st.isFile())
      return {
        output: `${shown} is not a regular file (a device, pipe or socket); delete_file only deletes regular files.`,
        isError: true,
      };
    const item = trashFileMove(ctx.db, ctx.paths, {
      path: abs,
      by: 'delete_file',
      sessionId: ctx.sessionId,
    });
    return { output: `Moved ${shown} to the trash (${item.id}); it can be restored from there.` };
  },
});
