import { isMap, type Document } from 'yaml';
import { z } from 'zod';
import { rmSync } from 'node:fs';
import { mcpNameSchema, mcpServerSchema, patchMcpServer } from '../shared/config/mcp.js';
import { ConfigError } from '../shared/config/load.js';
import type { Config } from '../shared/config/schema.js';
import { mcpOAuthFile, type Paths } from '../shared/paths.js';
import { IpcCallError, type Endpoint } from '../shared/protocol/endpoint.js';
import type { Db } from '../shared/store/db.js';
import {
  putInTrash,
  trashConflict,
  type TrashKind,
  type TrashKinds,
} from '../shared/store/trash.js';
import { editConfig } from './config-writer.js';
import { own } from '../shared/own.js';

/** The trash kind of an MCP server; its place is config.yml, so only the supervisor restores it. */
export const MCP_TRASH_KIND = 'mcp_server';

const trashPayload = z.object({ name: mcpNameSchema, server: z.record(z.string(), z.unknown()) });

interface Ctx {
  endpoint: Endpoint;
  file: string;
  db: Db;
  paths: Paths;
  current: () => Config;
  changed: (c: Config) => void;
}

/**
 * The config.yml edits of `mcp.servers`, like the model entries: edit the YAML document, validate
 * the whole result, write atomically, tell every child, then answer. A delete puts the entry in the
 * trash in the same transaction, so it is either gone and restorable, or still there. Answers the
 * trash kind that puts an entry back (trash-restore.ts registers it).
 */
export function handleMcpConfigEdits(ctx: Ctx): TrashKinds {
  const { endpoint, file, current } = ctx;
  const write = (edit: (doc: Document) => void): Config => {
    try {
      return editConfig(file, edit);
    } catch (err) {
      if (err instanceof ConfigError) throw new IpcCallError('invalid_request', err.message);
      throw err;
    }
  };
  const setServer = (doc: Document, name: string, server: Record<string, unknown>) => {
    const servers = doc.getIn(['mcp', 'servers'], true);
    if (isMap(servers)) servers.flow = false;
    doc.setIn(['mcp', 'servers', name], doc.createNode(server));
  };
  const exists = (name: string) => Object.hasOwn(current().mcp.servers, name);

  endpoint.handle('config.mcp.create', ({ name, server }) => {
    if (exists(name))
      throw new IpcCallError(
        'conflict',
        `An MCP server "${name}" exists already; PATCH it, or choose another name.`,
      );
    ctx.changed(write((doc) => setServer(doc, name, server)));
    return {};
  });

  endpoint.handle('config.mcp.import', ({ servers }) => {
    const taken = Object.keys(servers).filter(exists);
    if (taken.length > 0)
      throw new IpcCallError(
        'conflict',
        `MCP servers named ${taken.map((n) => `"${n}"`).join(', ')} exist already; nothing was imported. Rename them in the document or delete the existing ones.`,
      );
    ctx.changed(
      write((doc) => {
        for (const [name, s] of Object.entries(servers)) setServer(doc, name, s);
      }),
    );
    return {};
  });

  endpoint.handle('config.mcp.update', ({ name, patch }) => {
    if (!exists(name)) throw new IpcCallError('not_found', `There is no MCP server "${name}".`);
    ctx.changed(
      write((doc) => {
        const node = doc.getIn(['mcp', 'servers', name], true);
        const raw = (isMap(node) ? node.toJSON() : {}) as Record<string, unknown>;
        setServer(doc, name, patchMcpServer(raw, patch));
      }),
    );
    return {};
  });

  endpoint.handle('config.mcp.delete', ({ name }) => {
    const server = own(current().mcp.servers, name);
    if (!server) throw new IpcCallError('not_found', `There is no MCP server "${name}".`);
    let config: Config | undefined;
    const item = ctx.db
      .transaction(() => {
        const it = putInTrash(ctx.db, ctx.paths, {
          kind: MCP_TRASH_KIND,
          name,
          original: name,
          payload: { name, server },
        });
        config = write((doc) => doc.deleteIn(['mcp', 'servers', name]));
        return it;
      })
      .immediate();
    if (config) ctx.changed(config);
    // Its OAuth tokens go with it, not to the trash: a restored server signs in again.
    rmSync(mcpOAuthFile(ctx.paths.home, name), { force: true });
    return { trash_id: item.id };
  });

  const kind: TrashKind = {
    restore({ payload, options }) {
      const p = trashPayload.parse(payload);
      const asNew = options.as_new === true || options.new_name !== undefined;
      if (!asNew && exists(p.name)) {
        throw trashConflict(
          `An MCP server named "${p.name}" exists again. Restore this one under another name with {"new_name": "..."} (or {"as_new": true}).`,
          { name: p.name },
        );
      }
      let name = p.name;
      if (options.new_name !== undefined) {
        const parsed = mcpNameSchema.safeParse(options.new_name);
        if (!parsed.success)
          throw new IpcCallError(
            'invalid_request',
            `new_name: ${parsed.error.issues[0]?.message ?? 'not a valid server name'}`,
          );
        name = parsed.data;
      } else if (asNew) for (let n = 2; exists(name); n++) name = `${p.name}-${n}`;
      if (exists(name))
        throw trashConflict(
          `An MCP server named "${name}" exists already; choose another new_name.`,
          { name },
        );
      mcpServerSchema.parse(p.server);
      ctx.changed(write((doc) => setServer(doc, name, p.server)));
      return { restored_to: name };
    },
  };

  return { [MCP_TRASH_KIND]: kind };
}
