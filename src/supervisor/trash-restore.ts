import type { Paths } from '../shared/paths.js';
import type { Endpoint } from '../shared/protocol/endpoint.js';
import type { Db } from '../shared/store/db.js';
import { restoreFromTrash, type TrashKinds } from '../shared/store/trash.js';

/** Restores trash items whose place is config.yml (MCP servers, channel configs): only the supervisor writes it. */
export function handleTrashRestore(
  endpoint: Endpoint,
  db: Db,
  paths: Paths,
  kinds: TrashKinds,
): void {
  // A refusal (taken place, unknown kind) crosses IPC with its code and details: the client
  // reads the same 409 as for a kind the gateway restores itself.
  endpoint.handle('trash.restore', ({ id, options }) => {
    const { result } = restoreFromTrash(db, paths, kinds, id, options);
    return { restored_to: result.restored_to };
  });
}
