import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { ApiError, invalidInput } from '../../shared/errors.js';
import { skillInfoSchema } from '../../shared/protocol/events.js';
import {
  skillDeleted,
  skillImported,
  skillImportJson,
  skillList,
} from '../../shared/protocol/answers/skills.js';
import { packSkill } from '../../shared/skills/archive.js';
import {
  findSkill,
  listSkills,
  userSkillsDir,
  type Skill,
  type SkillInfo,
} from '../../shared/skills/catalog.js';
import { importSkill } from '../../shared/skills/install.js';
import { setSkillEnabled } from '../../shared/skills/state.js';
import { trashSkill } from '../../shared/skills/trash.js';
import { resolveUpload } from '../../shared/store/uploads.js';
import { writeChunks } from '../../shared/write-chunks.js';
import type { BodyStream } from '../body-stream.js';
import type { Deps } from '../deps.js';
import { multipartBoundary, parseMultipart } from '../multipart.js';
import { binaryPart, requestBodyDoc } from '../request-doc.js';
import { route, type Route } from '../route.js';

const toggleBody = z.strictObject({ enabled: z.boolean() }).partial();

export function view(s: Skill): SkillInfo {
  const { dir: _, ...info } = s;
  return info;
}

/** Skills: list, switch on and off, delete to the trash, import (zip or folder), export as a zip. Events go to the `skills` topic. */
export function skillRoutes(deps: Deps): Route[] {
  const need = (name: string): Skill => {
    const s = findSkill(deps.db, deps.paths, name);
    if (!s)
      throw new ApiError(
        'not_found',
        `There is no skill named ${JSON.stringify(name)}; GET /api/skills lists them.`,
      );
    return s;
  };
  return [
    route({
      method: 'GET',
      path: '/api/skills',
      summary:
        'Every skill: {items: [{name, description, source: builtin|user, enabled, valid, why, file_count, size_bytes}]}. An invalid skill says why and is never offered to the model.',
      response: skillList,
      handler: () => ({ body: { items: listSkills(deps.db, deps.paths).map(view) } }),
    }),
    route({
      method: 'PATCH',
      path: '/api/skills/:name/toggle',
      summary:
        'Flips a skill on or off; with {"enabled": bool} sets that state (idempotent). The next turn sees the change. Answers the skill.',
      body: toggleBody,
      response: skillInfoSchema,
      handler: ({ params, body }) => {
        const s = need(params.name);
        const enabled = body.enabled ?? !s.enabled;
        setSkillEnabled(deps.db, s.name, enabled);
        const after = { ...view(s), enabled };
        deps.publish('skills', 'skill.toggled', after);
        return { body: after };
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/skills/:name',
      summary:
        'Moves a user skill to the trash (restore it with POST /api/trash/{id}/restore). A built-in skill cannot be deleted (409): disable it instead.',
      response: skillDeleted,
      errors: [409],
      handler: ({ params }) => {
        const s = need(params.name);
        if (s.source === 'builtin') {
          throw new ApiError(
            'conflict',
            `"${s.name}" is a built-in skill and cannot be deleted; disable it with PATCH /api/skills/${s.name}/toggle {"enabled": false}.`,
            { reason: 'builtin' },
          );
        }
        const item = trashSkill(deps.db, deps.paths, s.name);
        deps.publish('skills', 'skill.deleted', { name: s.name, trash_id: item.id });
        deps.publish('trash', 'trash.added', { id: item.id, kind: item.kind, name: item.name });
        return { body: { deleted: s.name, trash_id: item.id } };
      },
    }),
    route({
      method: 'POST',
      path: '/api/skills/import',
      summary:
        'Imports a skill. JSON {"source": "<upload name>" | "<absolute path of a skill folder or .zip on this machine>", "force"?: true}, or multipart/form-data with a zip in a part named "file" (and optionally a field force=true). Answers 201 {name, description, files: [{path, size, sha256}], replaced}. A hostile or invalid archive is a 400 naming the rule (details.rule); an existing name is 409 unless force (the old one goes to the trash).',
      stream: true,
      requestBody: () =>
        requestBodyDoc(
          {
            'application/json': skillImportJson,
            'multipart/form-data': {
              type: 'object',
              properties: {
                file: binaryPart('The skill as a zip (a SKILL.md at its top, or in one folder).'),
                force: {
                  type: 'string',
                  enum: ['true', 'false'],
                  description:
                    'true: replace a skill of the same name (the old one goes to the trash).',
                },
              },
              required: ['file'],
            },
          },
          true,
        ),
      status: 201,
      response: skillImported,
      errors: [409, 413, 415],
      handler: async ({ req, body }) => {
        const refuse = (err: ApiError) => ({
          status: err.status,
          body: err.toBody(),
          headers: err.headers,
          close: true,
        });
        const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
        const tmp = join(
          userSkillsDir(deps.paths),
          `.upload-${randomBytes(8).toString('hex')}.zip`,
        );
        try {
          let source: { zip: string } | { folder: string };
          let force = false;
          if (type === 'application/json') {
            const parsed = skillImportJson.safeParse(
              await readJson(body, deps.config().limits.json_body_bytes),
            );
            if (!parsed.success) throw invalidInput(parsed.error);
            force = parsed.data.force === true;
            source = resolveSource(deps, parsed.data.source);
          } else {
            const mp = multipartBoundary(req.headers['content-type']);
            if (mp === undefined || 'error' in mp || !body) {
              throw new ApiError(
                'unsupported_media_type',
                'Send {"source": ...} as application/json, or the zip as multipart/form-data in a part named "file".',
              );
            }
            let got = false;
            mkdirSync(userSkillsDir(deps.paths), { recursive: true, mode: 0o700 });
            for await (const part of parseMultipart(
              capped(body, deps.config().limits.upload_bytes),
              mp.boundary,
            )) {
              if (part.name === 'file' && !got) {
                await writeChunks(tmp, part.body, { mode: 0o600 });
                got = true;
              } else if (part.name === 'force') {
                let v = '';
                for await (const c of part.body) if (v.length < 16) v += c.toString('utf8');
                force = v.trim() === 'true';
              } else for await (const _ of part.body); // skip it
            }
            if (!got)
              throw new ApiError(
                'invalid_request',
                'The multipart body has no part named "file" holding the zip.',
              );
            source = { zip: tmp };
          }
          const imported = await importSkill(deps.db, deps.paths, source, force);
          const info = findSkill(deps.db, deps.paths, imported.name);
          if (imported.replaced)
            deps.publish('trash', 'trash.added', {
              id: imported.replaced,
              kind: 'skill',
              name: imported.name,
            });
          deps.publish(
            'skills',
            imported.replaced ? 'skill.updated' : 'skill.created',
            info ? view(info) : { name: imported.name },
          );
          return { status: 201, body: imported };
        } catch (err) {
          if (err instanceof ApiError) return refuse(err);
          throw err;
        } finally {
          rmSync(tmp, { force: true });
        }
      },
    }),
    route({
      method: 'GET',
      path: '/api/skills/:name/export',
      summary:
        'The skill as a zip (application/zip, attachment "<name>.zip", entries under "<name>/"); importing it gives back the same files.',
      response: null,
      produces: 'application/zip',
      handler: async ({ params }) => {
        const s = need(params.name);
        const bytes = await packSkill(s.dir, s.name);
        return {
          body: bytes,
          headers: {
            'Content-Type': 'application/zip',
            'Content-Disposition': `attachment; filename="${s.name}.zip"`,
            'X-Content-Type-Options': 'nosniff',
          },
        };
      },
    }),
  ];
}

/** An upload name, `/api/uploads/<name>`, or an absolute path (a folder or a zip). */
function resolveSource(deps: Deps, source: string): { zip: string } | { folder: string } {
  const uploadName = source.startsWith('/api/uploads/')
    ? source.slice('/api/uploads/'.length)
    : isAbsolute(source)
      ? undefined
      : source;
  if (uploadName !== undefined) {
    const u = resolveUpload(deps.db, deps.paths, uploadName);
    if (!u)
      throw new ApiError(
        'invalid_request',
        `There is no upload named ${JSON.stringify(uploadName)}; upload the zip with POST /api/upload first, or give an absolute path.`,
      );
    return { zip: u.path };
  }
  let st;
  try {
    st = statSync(source);
  } catch {
    throw new ApiError(
      'invalid_request',
      `Nothing exists at ${source}; give the absolute path of a skill folder or a .zip on this machine.`,
    );
  }
  if (st.isDirectory()) return { folder: source };
  if (st.isFile()) return { zip: source };
  throw new ApiError('invalid_request', `${source} is neither a folder nor a file.`);
}

async function readJson(body: BodyStream | undefined, limit: number): Promise<unknown> {
  if (!body) return {};
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of body) {
    n += c.length;
    if (n > limit)
      throw new ApiError(
        'too_large',
        `The request body is larger than the limit of ${limit} bytes (limits.json_body_bytes in config.yml).`,
      );
    chunks.push(c);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new ApiError('invalid_request', `The body is not valid JSON: ${(err as Error).message}`);
  }
}

async function* capped(body: AsyncIterable<Buffer>, limit: number): AsyncGenerator<Buffer> {
  let n = 0;
  for await (const chunk of body) {
    n += chunk.length;
    if (n > limit)
      throw new ApiError(
        'too_large',
        `The zip is larger than the upload limit of ${limit} bytes (limits.upload_bytes in config.yml).`,
      );
    yield chunk;
  }
}
