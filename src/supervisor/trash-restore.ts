import { ApiError } from '../shared/errors.js';
import type { Paths } from '../shared/paths.js';
import { IpcCallError, type Endpoint } from '../shared/protocol/endpoint.js';
import type { Db } from '../shared/store/db.js';
import { restoreFromTrash, type TrashKinds } from '../shared/store/trash.js';

/** Restores trash items whose place is config.yml (MCP servers, channel configs): only the supervisor writes it. */
export function handleTrashRestore(
  endpoint: Endpoint,
  db: Db,
  paths: Paths,
  kinds: TrashKinds,
): void {
  endpoint.handle('trash.restore', ({ id, options }) => {
    try {
      const { result } = restoreFromTrash(db, paths, kinds, id, options);
      return { restored_to: result.restored_to };
    } catch (err) {
      // The gateway answers with the same status: the code crosses IPC, the message too.
      if (err instanceof ApiError) throw new IpcCallError(err.code, err.message);
      throw err;
    }
  });
}
