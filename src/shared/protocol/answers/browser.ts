import { z } from 'zod';
import { browserStepSchema } from '../../browser/steps.js';
import { browserStatusSchema, browserVerifyResultSchema } from '../browser.js';

/** The answers of /api/browser: the connection and the recordings. zod and node-free. */

export const browserStatusView = z.lazy(() => browserStatusSchema.meta({ id: 'BrowserStatus' }));

/** POST /api/browser/verify: what connecting found, and whether the endpoint was saved. */
export const browserVerifyAnswer = z.lazy(() =>
  browserVerifyResultSchema.extend({
    /** host:port of the endpoint tried; null when none is given or configured. */
    endpoint: z.string().nullable(),
    /** The given endpoint was written to config.yml. */
    saved: z.boolean(),
  }),
);

/** A recording as parsed: its params with their defaults as text. */
export const recordingView = z.lazy(() =>
  z
    .object({
      description: z.string(),
      params: z.array(
        z.object({
          name: z.string(),
          description: z.string().optional(),
          default: z.string().optional(),
        }),
      ),
      steps: z.array(browserStepSchema),
    })
    .meta({ id: 'BrowserRecording' }),
);

/** Where a recording is wrong: the sentence, the field's path, and its line and column in the YAML. */
export const recordingIssueSchema = z.lazy(() =>
  z.object({
    message: z.string(),
    path: z.string(),
    line: z.number().int().nullable(),
    column: z.number().int().nullable(),
    /** 1-based, for a step's field. */
    step: z.number().int().optional(),
  }),
);

export const recordingList = z.lazy(() =>
  z.object({
    recordings: z.array(
      z.object({
        name: z.string(),
        description: z.string(),
        steps: z.number().int(),
        params: recordingView.unwrap().shape.params,
        /** false: the file no longer parses; error says why. */
        valid: z.boolean(),
        error: z.string().nullable(),
      }),
    ),
  }),
);

export const recordingDetail = z.lazy(() =>
  z.object({
    name: z.string(),
    /** The file as written. */
    yaml: z.string(),
    /** null when it does not parse; issues then say where. */
    recording: recordingView.nullable(),
    issues: z.array(recordingIssueSchema),
  }),
);

export const recordingSaved = z.lazy(() =>
  z.object({
    name: z.string(),
    yaml: z.string(),
    recording: recordingView,
    /** There was no recording of that name (the answer is then 201). */
    created: z.boolean(),
  }),
);

export const recordingDeleted = z.lazy(() =>
  z.object({ deleted: z.string(), trash_id: z.string() }),
);
