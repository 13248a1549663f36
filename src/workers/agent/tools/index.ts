import { deleteFileTool } from './files/delete-file.js';
import { editFileTool } from './files/edit-file.js';
import { globTool } from './search/glob.js';
import { grepTool } from './search/grep.js';
import { readFileTool } from './files/read-file.js';
import type { Tool } from './registry.js';
import { webFetchTool } from './web/web-fetch.js';
import { writeFileTool } from './files/write-file.js';

export { closeSearchPool } from './search/search-pool.js';

/** Reading and changing files (writes go through read-before-write and the trash). */
export const fileTools: Tool[] = [readFileTool, writeFileTool, editFileTool, deleteFileTool];
/** Finding files and text, on the search thread pool. */
export const searchTools: Tool[] = [globTool, grepTool];
/** The web, public addresses only. */
export const webTools: Tool[] = [webFetchTool];

/** All of the above, in the order the model sees them. */
export function builtinTools(): Tool[] {
  return [...fileTools, ...searchTools, ...webTools];
}
