import { z } from 'zod';
import {
  listRecordingNames,
  parseRecording,
  readRecording,
  recordingFile,
  recordingNameSchema,
  writeRecording,
} from '../../../shared/browser/recording.js';
import { ApiError } from '../../../shared/errors.js';
import { trashFileMove } from '../../../shared/store/file-trash.js';
import {
  recordingDeleted,
  recordingDetail,
  recordingList,
  recordingSaved,
} from '../../../shared/protocol/answers/browser.js';
import type { Deps } from '../../deps.js';
import { route, type Route } from '../../route.js';

const MAX_YAML = 256 * 1024;
const putBody = z.strictObject({
  yaml: z.string().max(MAX_YAML, `a recording is at most ${MAX_YAML / 1024} KiB of YAML`),
});

/** Browser recordings: YAML files in $SVC_HOME/browser/recordings/, validated on write, deleted to the trash. */
export function browserRecordingRoutes(deps: Deps): Route[] {
  const home = deps.paths.home;
  const name = (raw: string | undefined): string => {
    const r = recordingNameSchema.safeParse(raw ?? '');
    if (!r.success)
      throw new ApiError(
        'invalid_request',
        `Invalid recording name "${raw ?? ''}": ${r.error.issues[0]?.message}.`,
        [{ path: 'name', message: r.error.issues[0]?.message }],
      );
    return r.data;
  };
  const need = (n: string): string => {
    const text = readRecording(home, n);
    if (text === null)
      throw new ApiError(
        'not_found',
        `There is no recording "${n}"; GET /api/browser/recordings lists them.`,
      );
    return text;
  };
  const summary = (n: string) => {
    const text = readRecording(home, n) ?? '';
    const p = parseRecording(text);
    if (!p.ok)
      return {
        name: n,
        description: '',
        steps: 0,
        params: [],
        valid: false,
        error: p.issues[0]?.message ?? 'invalid',
      };
    return {
      name: n,
      description: p.recording.description,
      steps: p.recording.steps.length,
      params: p.recording.params,
      valid: true,
      error: null,
    };
  };
  return [
    route({
      method: 'GET',
      path: '/api/browser/recordings',
      summary:
        'Every recording: name, description, step count, params (a file that no longer parses is listed with valid: false and its error).',
      response: recordingList,
      handler: () => ({ body: { recordings: listRecordingNames(home).map(summary) } }),
    }),
    route({
      method: 'GET',
      path: '/api/browser/recordings/:name',
      summary:
        'One recording: its YAML as written, and the parsed form (null with the issues when it does not parse).',
      response: recordingDetail,
      handler: ({ params }) => {
        const n = name(params.name);
        const yaml = need(n);
        const p = parseRecording(yaml);
        return {
          body: {
            name: n,
            yaml,
            recording: p.ok ? p.recording : null,
            issues: p.ok ? [] : p.issues,
          },
        };
      },
    }),
    route({
      method: 'PUT',
      path: '/api/browser/recordings/:name',
      summary:
        'Creates or replaces a recording from {"yaml": "…"}: description, params [{name, description, default}], steps [{action, target, value}] with {{param}} placeholders. A YAML error is a 400 with its line and column; a schema error names the step and field (details). Written atomically.',
      body: putBody,
      response: recordingSaved,
      others: { 201: { description: 'Created: a new recording', schema: recordingSaved } },
      handler: ({ params, body }) => {
        const n = name(params.name);
        const p = parseRecording(body.yaml);
        if (!p.ok) {
          const first = p.issues[0]!;
          const at = first.line !== null ? ` (line ${first.line}, column ${first.column})` : '';
          throw new ApiError(
            'invalid_request',
            p.kind === 'yaml'
              ? `The recording is not valid YAML: ${first.message}${at}.`
              : `Invalid recording: ${first.message}${at}.`,
            p.issues,
          );
        }
        const existed = readRecording(home, n) !== null;
        writeRecording(home, n, body.yaml);
        return {
          status: existed ? 200 : 201,
          body: { name: n, yaml: body.yaml, recording: p.recording, created: !existed },
        };
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/browser/recordings/:name',
      summary: 'Moves a recording to the trash; POST /api/trash/{id}/restore brings it back.',
      response: recordingDeleted,
      handler: ({ params }) => {
        const n = name(params.name);
        need(n);
        const item = trashFileMove(deps.db, deps.paths, {
          path: recordingFile(home, n),
          by: 'DELETE /api/browser/recordings',
          sessionId: null,
        });
        deps.publish('trash', 'trash.added', { id: item.id, kind: item.kind, name: item.name });
        return { body: { deleted: n, trash_id: item.id } };
      },
    }),
  ];
}
