import { z } from 'zod';

/**
 * What a stored message's `content` holds, by role. The agent writes these and reads them back
 * (parsed, since the store is outside the process); clients render them.
 */
export const attachmentSchema = z.object({
  name: z.string(),
  mime: z.string(),
  size: z.number().int(),
  /** Absolute path of the uploaded file, for the agent's tools. */
  path: z.string(),
  /** The file's own name as the person sent it (`name` is the stored one, with a unique prefix). */
  original_name: z.string().optional(),
});
export type Attachment = z.infer<typeof attachmentSchema>;

/** An MCP resource attached to a user message: what the model was given of it (text capped, binary described). */
export const attachedResourceSchema = z.object({
  server: z.string(),
  uri: z.string(),
  text: z.string(),
});

export const userContent = z.object({
  text: z.string(),
  attachments: z.array(attachmentSchema).optional(),
  resources: z.array(attachedResourceSchema).optional(),
  /** Set on a continuation turn that works toward the session's goal. */
  continuation: z.boolean().optional(),
});

export const toolCallSchema = z.object({ id: z.string(), name: z.string(), arguments: z.string() });

export const assistantContent = z.object({
  text: z.string(),
  reasoning: z
    .array(
      z.object({
        text: z.string(),
        signature: z.string().optional(),
        redacted: z.string().optional(),
      }),
    )
    .optional(),
  tool_calls: z.array(toolCallSchema).optional(),
  stop_reason: z.string().optional(),
  model: z.string().optional(),
});

export const toolContent = z.object({
  tool_call_id: z.string(),
  name: z.string(),
  output: z.string(),
  is_error: z.boolean().optional(),
  /** Images a tool returned (MCP), saved as uploads. */
  images: z.array(attachmentSchema).optional(),
  /** Written by svc, not the tool: the turn was stopped (or failed) before the call returned. */
  unfinished: z.enum(['interrupted', 'failed']).optional(),
});

/** A compaction summary standing in for older messages kept on disk. */
export const summaryContent = z.object({
  text: z.string(),
  summary_of: z.object({ from_seq: z.number().int(), to_seq: z.number().int(), file: z.string() }),
});

export type AssistantContent = z.infer<typeof assistantContent>;

/** What `content` holds for each role: the shape clients read (the Web UI imports it as a type). */
export interface ContentByRole {
  user: z.infer<typeof userContent>;
  assistant: AssistantContent;
  tool: z.infer<typeof toolContent>;
  system: z.infer<typeof summaryContent>;
}
