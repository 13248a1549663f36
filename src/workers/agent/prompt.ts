import { log } from '../../shared/log.js';
import {
  assistantContent,
  summaryContent,
  toolContent,
  userContent,
} from '../../shared/protocol/message-content.js';
import type { Message as StoredMessage } from '../../shared/store/messages.js';
import type { Goal } from '../../shared/store/goals.js';
import { readFileSync } from 'node:fs';
import type { ImagePart, Message, TextPart } from './providers/index.js';
import { SKILLS_MOUNT } from './sandbox/skills-mount.js';

function readImage(path: string, mime: string): ImagePart | undefined {
  try {
    return {
      type: 'image',
      mediaType: mime as 'image/png',
      data: readFileSync(path).toString('base64'),
    };
  } catch {
    return undefined; // the upload is gone: the model gets the note instead
  }
}

/** The system prompt: who the agent is, for whom, the time, and the goal when there is one. */
export function systemPrompt(opts: {
  soul?: string;
  user?: string;
  memoryIndex?: string;
  tools?: string[];
  skills?: Array<{ name: string; description: string }>;
  goal?: Goal;
  workingDir: string | null;
}): string {
  const parts = [
    'You are the agent of svc, a personal agent server. You work for one person on their own machine: answer directly, use tools when they help, and say plainly when you cannot do something.',
    `Current time: ${new Date().toISOString()}.`,
  ];
  if (opts.workingDir) parts.push(`Working directory: ${opts.workingDir}`);
  if (opts.soul) parts.push(`# Your character (soul.md)\n${opts.soul}`);
  if (opts.user) parts.push(`# About the user (user.md)\n${opts.user}`);
  if (opts.memoryIndex) {
    parts.push(
      `# Memory (MEMORY.md)\nNotes you kept in earlier sessions; memory_search finds more, memory_write adds one.\n${opts.memoryIndex}`,
    );
  }
  if (opts.tools?.length)
    parts.push(
      `# Tools\nYou can use: ${opts.tools.join(', ')}. Risky steps may need the user's approval; if one is refused, say so and suggest another way.`,
    );
  if (opts.tools?.includes('search_history'))
    parts.push(
      '# Earlier conversations\nYou see only this session. When the user refers to something from another chat ("the config we fixed", "what I told you about…", "like last time") or asks what was said before, call search_history before answering or saying you do not know, and cite the session and date of what you use.',
    );
  if (opts.skills?.length) parts.push(skillsSection(opts.skills));
  if (opts.goal && opts.goal.status === 'active') {
    parts.push(
      `# Goal\nThe session has a goal you keep working toward across turns:\n${opts.goal.objective}\n` +
        'When the goal is reached, call update_goal with status "complete"; if you cannot go on without the user, call it with status "blocked" and say why.',
    );
  }
  return parts.join('\n\n');
}

/** Skills listed in the prompt at most; the rest are named by count so the model knows to ask. */
const SKILLS_LISTED = 50;
const SKILL_DESCRIPTION_CAP = 300;

/** The enabled, valid skills by name and description; their bodies load on demand with the skill tool. */
function skillsSection(skills: Array<{ name: string; description: string }>): string {
  const lines = skills.slice(0, SKILLS_LISTED).map((s) => {
    const d = s.description.replace(/\s+/g, ' ');
    return `- ${s.name}: ${d.length > SKILL_DESCRIPTION_CAP ? `${d.slice(0, SKILL_DESCRIPTION_CAP)}…` : d}`;
  });
  if (skills.length > SKILLS_LISTED)
    lines.push(`- (${skills.length - SKILLS_LISTED} more skills not listed)`);
  return `# Skills\nInstructions for tasks you may be asked to do. When a task matches a skill, load it first with the skill tool (name), then follow it. In terminal commands a skill's folder is ${SKILLS_MOUNT}/<name> (read-only), where its scripts run.\n${lines.join('\n')}`;
}

/**
 * Turns the stored transcript into provider messages. A compaction summary stands in for the
 * messages it replaced; content that does not parse is skipped (and logged), never sent raw.
 */
export function historyToMessages(
  stored: readonly StoredMessage[],
  opts: { vision: boolean } = { vision: false },
): Message[] {
  let from = 0;
  let summary: string | undefined;
  for (const m of stored) {
    if (m.role !== 'system') continue;
    const s = summaryContent.safeParse(m.content);
    if (s.success) {
      from = s.data.summary_of.to_seq;
      summary = s.data.text;
    }
  }
  const out: Message[] = [];
  if (summary)
    out.push(
      { role: 'user', content: `[Summary of the earlier conversation]\n${summary}` },
      { role: 'assistant', content: 'Understood; I have the summary.' },
    );
  for (const m of stored) {
    if (m.seq <= from || m.role === 'system') continue;
    const mapped = toProviderMessage(m, opts.vision);
    if (mapped) out.push(mapped);
    else
      log.warn('skipped a stored message that does not parse', {
        session: m.session_id,
        seq: m.seq,
      });
  }
  return closeOpenToolCalls(out);
}

/**
 * Providers refuse a history where a tool call has no result. A turn's end stores one for each
 * call it left open (store/open-calls.ts); a call still open here is from before that, or from an
 * end whose write failed (a full disk): it gets a result saying so.
 */
function closeOpenToolCalls(messages: Message[]): Message[] {
  const out: Message[] = [];
  let open: string[] = [];
  const close = () => {
    for (const id of open)
      out.push({
        role: 'tool',
        toolCallId: id,
        content: 'Not run: the turn ended before this call finished.',
        isError: true,
      });
    open = [];
  };
  for (const m of messages) {
    if (m.role === 'tool') open = open.filter((id) => id !== m.toolCallId);
    else close();
    out.push(m);
    if (m.role === 'assistant') open = (m.toolCalls ?? []).map((c) => c.id);
  }
  close();
  return out;
}

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
const IMAGE_MAX = 5 * 1024 * 1024;

function toProviderMessage(m: StoredMessage, vision: boolean): Message | undefined {
  if (m.role === 'user') {
    const c = userContent.safeParse(m.content);
    if (!c.success) return undefined;
    const parts: Array<TextPart | ImagePart> = [];
    const notes: string[] = [];
    for (const a of c.data.attachments ?? []) {
      const image =
        vision && IMAGE_TYPES.has(a.mime) && a.size <= IMAGE_MAX
          ? readImage(a.path, a.mime)
          : undefined;
      if (image) parts.push(image);
      // Files the model cannot see go in as a path its tools can read.
      else notes.push(`[Attached file: ${a.name} (${a.mime}, ${a.size} bytes) at ${a.path}]`);
    }
    // Attached MCP resources: what was read of them when the message was sent.
    for (const r of c.data.resources ?? []) notes.push(r.text);
    const text = [c.data.text, ...notes].filter(Boolean).join('\n');
    if (parts.length === 0) return { role: 'user', content: text };
    return { role: 'user', content: [...parts, { type: 'text', text }] };
  }
  if (m.role === 'assistant') {
    const c = assistantContent.safeParse(m.content);
    if (!c.success) return undefined;
    const reasoning = (c.data.reasoning ?? []).map((r) => ({
      type: 'reasoning' as const,
      text: r.text,
      signature: r.signature,
      redacted: r.redacted,
    }));
    return {
      role: 'assistant',
      content: [
        ...reasoning,
        ...(c.data.text ? [{ type: 'text' as const, text: c.data.text }] : []),
      ],
      ...(c.data.tool_calls?.length ? { toolCalls: c.data.tool_calls } : {}),
    };
  }
  if (m.role === 'tool') {
    const c = toolContent.safeParse(m.content);
    if (!c.success) return undefined;
    const images = vision
      ? (c.data.images ?? []).flatMap((a) =>
          IMAGE_TYPES.has(a.mime) && a.size <= IMAGE_MAX ? (readImage(a.path, a.mime) ?? []) : [],
        )
      : [];
    if (images.length === 0)
      return {
        role: 'tool',
        toolCallId: c.data.tool_call_id,
        content: c.data.output,
        isError: c.data.is_error,
      };
    return {
      role: 'tool',
      toolCallId: c.data.tool_call_id,
      content: [{ type: 'text', text: c.data.output }, ...images],
      isError: c.data.is_error,
    };
  }
  return undefined;
}
