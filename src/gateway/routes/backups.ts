import { statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { BACKUP_NAME } from '../../shared/backup/manifest.js';
import { backupDir, listArchives } from '../../shared/backup/runner.js';
import { backupConfigSchema } from '../../shared/config/backup.js';
import { ApiError } from '../../shared/errors.js';
import { backupSettings } from '../../shared/protocol/backup.js';
import {
  backupList,
  backupMade,
  backupSettingsView,
} from '../../shared/protocol/answers/backups.js';
import { lastBackup } from '../../shared/store/backups.js';
import type { Deps } from '../deps.js';
import { route, type Route } from '../route.js';
import { sendFile } from '../send-file.js';

/** Backups of $SVC_HOME: the archives in the configured folder, the last result, make one, download one. */
export function backupRoutes(deps: Deps): Route[] {
  const dir = () => backupDir(deps.paths.home, deps.config().backup);
  return [
    route({
      method: 'GET',
      path: '/api/backups',
      summary:
        'The archives in the backup folder, newest first: {dir, schedule, keep, encrypt, last: {trigger, started_at, ended_at, ok, file, size, ms, error} or null, items: [{name, size, created_at, encrypted}]}.',
      response: backupList,
      handler: () => {
        const cfg = deps.config().backup;
        const items = listArchives(dir()).flatMap((name) => {
          try {
            const st = statSync(join(dir(), name));
            return [
              {
                name,
                size: st.size,
                created_at: st.mtime.toISOString(),
                encrypted: name.endsWith('.age'),
              },
            ];
          } catch {
            return [];
          }
        });
        return {
          body: {
            dir: dir(),
            schedule: cfg.schedule ?? null,
            keep: cfg.keep,
            encrypt: cfg.encrypt,
            last: lastBackup(deps.db) ?? null,
            items,
          },
        };
      },
    }),
    route({
      method: 'POST',
      path: '/api/backups',
      summary:
        "Makes a backup now, as config.yml's backup section says (folder, uploads, encryption), the same archive as `svc backup create`: 201 {name, size, files, ms} once it is whole; 409 while one is being made.",
      body: z.object({}).strict().optional(),
      status: 201,
      response: backupMade,
      errors: [409],
      handler: async () => {
        const r = await deps.endpoint.request('backup.create', {});
        return {
          status: 201,
          body: { name: basename(r.file), size: r.size, files: r.files, ms: r.ms },
        };
      },
    }),
    route({
      method: 'PUT',
      path: '/api/backups/settings',
      summary:
        'Sets scheduled backups (`backup:` in config.yml, replaced whole): {schedule (a cron line, or null for none), dir, keep, uploads, encrypt, recipients, passphrase_file}; 400 naming the field when config.yml would not be valid.',
      body: backupSettings,
      response: backupSettingsView,
      handler: async ({ body }) => {
        await deps.endpoint.request('config.backup.set', body);
        // The live config follows by event; answer what config.yml now says.
        const set = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== null));
        const cfg = backupConfigSchema.parse(set);
        return {
          body: {
            schedule: cfg.schedule ?? null,
            dir: backupDir(deps.paths.home, cfg),
            keep: cfg.keep,
            uploads: cfg.uploads,
            encrypt: cfg.encrypt,
          },
        };
      },
    }),
    route({
      method: 'GET',
      path: '/api/backups/:name',
      summary:
        'Downloads one archive (application/zip, or application/octet-stream when encrypted), as an attachment. It holds secrets unless encrypted.',
      response: null,
      produces: ['application/zip', 'application/octet-stream'],
      handler: async ({ params, req, responder }) => {
        const name = params.name ?? '';
        const path = join(dir(), name);
        const exists =
          BACKUP_NAME.test(name) && statSync(path, { throwIfNoEntry: false })?.isFile();
        if (!exists)
          throw new ApiError(
            'not_found',
            `There is no backup named ${JSON.stringify(name)}; GET /api/backups lists them.`,
          );
        const headers = {
          'Content-Type': name.endsWith('.age') ? 'application/octet-stream' : 'application/zip',
          'Content-Disposition': `attachment; filename="${name}"`,
          'X-Content-Type-Options': 'nosniff',
          'Cache-Control': 'no-store',
        };
        return sendFile(responder, path, headers, req.method === 'HEAD');
      },
    }),
  ];
}
