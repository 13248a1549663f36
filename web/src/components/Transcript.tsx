import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { ChatState, Streamed, ToolLive, TurnInfo } from '../lib/chat';
import type { Store } from '../lib/store';
import { pure } from '../lib/pure';
import type { Message, MessageOf } from '../lib/types';
import { AssistantMessage } from './AssistantMessage';
import { LiveReply } from './LiveReply';
import { StoppedNote } from './StoppedNote';
import { ToolCard } from './ToolCard';
import { TurnDetails } from './TurnDetails';
import { UserMessage } from './UserMessage';

/**
 * Pairs each tool result with its call in the latest assistant message before it: call ids are not
 * unique across a session (some providers number them per reply). Recomputed only when the list
 * of messages changes, so the maps keep their identity between streamed frames.
 */
function pair(messages: Message[]): {
  paired: Map<string, Map<string, MessageOf<'tool'>>>;
  pairedTools: Set<string>;
} {
  const paired = new Map<string, Map<string, MessageOf<'tool'>>>();
  const pairedTools = new Set<string>();
  let open: Array<{ msg: string; call: string }> = [];
  for (const m of messages) {
    const calls = m.role === 'assistant' ? (m.content?.tool_calls ?? []) : [];
    if (calls.length > 0) {
      open = calls.map((c) => ({ msg: m.id, call: c.id }));
      paired.set(m.id, new Map());
    } else if (m.role === 'tool') {
      const at = open.findIndex((o) => o.call === m.content?.tool_call_id);
      if (at >= 0) {
        paired.get(open[at]!.msg)!.set(open[at]!.call, m);
        pairedTools.add(m.id);
        open.splice(at, 1);
      }
    }
  }
  return { paired, pairedTools };
}

/**
 * The ended turns by the id of their last message, where their details go. A user message starts
 * a turn: one the list has no turn for (older than its page, or just sent) shows none.
 */
function turnEnds(messages: Message[], turns: ReadonlyMap<number, TurnInfo>) {
  const ends = new Map<string, TurnInfo>();
  let open: TurnInfo | undefined;
  messages.forEach((m, i) => {
    if (m.role === 'user') open = turns.get(m.seq);
    const next = messages[i + 1];
    if (open && open.status !== 'running' && (!next || next.role === 'user')) {
      ends.set(m.id, open);
      open = undefined;
    }
  });
  return ends;
}

/** The chat's last message is a reply cut short by Stop: it carries the one "stopped" marker. */
function endsStopped(messages: Message[]): boolean {
  const last = messages.at(-1);
  return last?.role === 'assistant' && last.content?.stop_reason === 'interrupted';
}

interface ItemProps {
  m: Message;
  results: Map<string, MessageOf<'tool'>> | undefined;
  /** Live tool state and waiting approvals: only for messages of the running turn (else undefined). */
  tools: Record<string, ToolLive> | undefined;
  waiting: Set<string> | undefined;
  showReasoning: boolean;
}

/** One committed message; renders again only when its own props change. */
const MessageItem = pure(function MessageItem({
  m,
  results,
  tools,
  waiting,
  showReasoning,
}: ItemProps) {
  if (m.role === 'user')
    return (
      <UserMessage
        text={m.content?.text ?? ''}
        attachments={m.content?.attachments}
        continuation={m.content?.continuation === true}
      />
    );
  if (m.role === 'assistant')
    return (
      <AssistantMessage
        m={m}
        results={results}
        tools={tools}
        waiting={waiting}
        showReasoning={showReasoning}
      />
    );
  if (m.role === 'tool')
    return (
      <ToolCard
        name={m.content?.name ?? 'tool'}
        result={{
          output: m.content?.output ?? '',
          is_error: m.content?.is_error === true,
          unfinished: m.content?.unfinished,
        }}
      />
    );
  return (
    <div class="system-note muted small">
      {typeof m.content?.text === 'string' ? m.content.text : 'System note'}
    </div>
  );
});

/**
 * Committed messages are drawn in chunks of this many, counted from the oldest (so a new message
 * only ever changes the last chunk). A chunk out of view skips style, layout and paint
 * (`content-visibility: auto` per chunk, not per message: each one costs the browser an
 * intersection check every frame).
 */
const CHUNK = 10;
/** Chunks drawn when a chat opens; older ones follow one at a time while the page is idle. */
const FIRST_CHUNKS = 3;

interface ChunkProps {
  messages: Message[];
  from: number;
  to: number;
  paired: Map<string, Map<string, MessageOf<'tool'>>>;
  pairedTools: Set<string>;
  ends: Map<string, TurnInfo>;
  turnSeq: number | undefined;
  tools: Record<string, ToolLive>;
  waiting: Set<string>;
  showReasoning: boolean;
}

/** Messages [from, to) of the chat. Its props do not change while a reply streams, so a streamed frame skips it. */
const Chunk = pure(function Chunk({
  messages,
  from,
  to,
  paired,
  pairedTools,
  ends,
  turnSeq,
  tools,
  waiting,
  showReasoning,
}: ChunkProps) {
  const items = [];
  for (let i = from; i < to; i++) {
    const m = messages[i]!;
    const end = ends.get(m.id);
    if (pairedTools.has(m.id)) {
      if (end) items.push(<TurnDetails key={`t${m.id}`} t={end} />);
      continue;
    }
    const current = turnSeq !== undefined && m.seq > turnSeq;
    items.push(
      <div key={m.id} class="msg-item" data-message-id={m.id}>
        <MessageItem
          m={m}
          results={paired.get(m.id)}
          tools={current ? tools : undefined}
          waiting={current ? waiting : undefined}
          showReasoning={showReasoning}
        />
      </div>,
    );
    if (end) items.push(<TurnDetails key={`t${m.id}`} t={end} />);
  }
  return <div class="chunk">{items}</div>;
});

type IdleWindow = {
  requestIdleCallback?: (cb: () => void, o?: { timeout: number }) => number;
  cancelIdleCallback?: (id: number) => void;
};

/** Runs `fn` when the page is idle (a timer where there is no requestIdleCallback); answers the cancel. */
function whenIdle(fn: () => void): () => void {
  const w = window as unknown as IdleWindow;
  if (w.requestIdleCallback && w.cancelIdleCallback) {
    const id = w.requestIdleCallback(fn, { timeout: 500 });
    return () => w.cancelIdleCallback?.(id);
  }
  const t = setTimeout(fn, 16);
  return () => clearTimeout(t);
}

/**
 * The transcript: committed messages (tool results folded into their calls' cards), then the live
 * turn. It is a `log` a keyboard can scroll; its own live announcing is off (it would read every
 * streamed delta): the chat announces a finished reply once, in its status region.
 *
 * A long chat opens without a long task: the newest chunks are drawn first and older ones are
 * added above them one at a time while the page is idle, until all are in the page (so
 * find-in-page and a screen reader see the whole chat). Chunks out of view skip layout and paint,
 * and the committed box is apart from the live reply, so a streamed frame costs about the same in
 * a long chat as in a short one.
 */
export function Transcript({
  s,
  streamed,
  focus,
}: {
  s: ChatState;
  /** The running step's text as it streams (the live reply follows it by itself). */
  streamed: Store<Streamed>;
  focus?: string | undefined;
}) {
  const box = useRef<HTMLDivElement>(null);
  const stick = useRef(!focus);
  /** How many of the newest chunks are drawn so far. */
  const [drawn, setDrawn] = useState(FIRST_CHUNKS);
  const { paired, pairedTools } = useMemo(() => pair(s.messages), [s.messages]);
  // Kept the same map while its entries are (a new message mostly changes none), so the chunks
  // drawn before it are not drawn again.
  const lastEnds = useRef(new Map<string, TurnInfo>());
  const ends = useMemo(() => {
    const next = turnEnds(s.messages, s.turns);
    const prev = lastEnds.current;
    if (next.size === prev.size && [...next].every(([k, v]) => prev.get(k) === v)) return prev;
    lastEnds.current = next;
    return next;
  }, [s.messages, s.turns]);
  /** The message a search result opened, once it is found and marked. */
  const shown = useRef<string | undefined>(undefined);
  const chunks = Math.ceil(s.messages.length / CHUNK);

  // A search result opens the chat at its message: its chunk is drawn, then it is scrolled to
  // the middle, marked, and focused (so a screen reader reads it). A tool output folded into its
  // call's card is shown as that card.
  const target = useMemo(() => {
    if (!focus) return undefined;
    const at = s.messages.findIndex((m) => m.id === focus);
    if (at < 0) return undefined;
    if (!pairedTools.has(focus)) return { id: focus, at };
    for (let i = at - 1; i >= 0; i--)
      if ([...(paired.get(s.messages[i]!.id)?.values() ?? [])].some((t) => t.id === focus))
        return { id: s.messages[i]!.id, at: i };
    return undefined;
  }, [focus, s.messages, paired, pairedTools]);
  useEffect(() => {
    if (target) setDrawn((d) => Math.max(d, chunks - Math.floor(target.at / CHUNK)));
  }, [target, chunks]);
  useLayoutEffect(() => {
    if (!target || shown.current === focus) return;
    const el = box.current?.querySelector<HTMLElement>(
      `[data-message-id="${CSS.escape(target.id)}"]`,
    );
    if (!el) return;
    shown.current = focus;
    stick.current = false;
    for (const old of box.current?.querySelectorAll('.msg-item.found') ?? [])
      old.classList.remove('found');
    el.classList.add('found');
    el.tabIndex = -1;
    el.scrollIntoView({ block: 'center' });
    el.focus({ preventScroll: true });
  });

  useLayoutEffect(() => {
    const el = box.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  });

  useEffect(() => {
    if (drawn >= chunks) return;
    return whenIdle(() => setDrawn((d) => d + 1));
  }, [drawn, chunks]);
  const first = Math.max(0, chunks - drawn);

  const waiting = useMemo(() => new Set(s.approvals.map((a) => a.call_id ?? '')), [s.approvals]);
  const showReasoning = s.session?.show_reasoning !== false;

  return (
    <div
      class="transcript"
      ref={box}
      role="log"
      aria-live="off"
      aria-label="Messages"
      tabIndex={0}
      data-testid="transcript"
      onScroll={(e) => {
        const el = e.currentTarget;
        stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
      }}
    >
      {s.messages.length === 0 && !s.sending && !s.turn && !s.ended && (
        <p class="muted center">Nothing here yet: say hello below.</p>
      )}
      {chunks > 0 && (
        <div class="committed">
          {Array.from({ length: chunks - first }, (_, k) => {
            const c = first + k;
            return (
              <Chunk
                key={c}
                messages={s.messages}
                from={c * CHUNK}
                to={Math.min(s.messages.length, (c + 1) * CHUNK)}
                paired={paired}
                pairedTools={pairedTools}
                ends={ends}
                turnSeq={s.turnSeq}
                tools={s.tools}
                waiting={waiting}
                showReasoning={showReasoning}
              />
            );
          })}
        </div>
      )}
      {s.sending && <UserMessage text={s.sending.text} pending />}
      {s.turn && (
        <LiveReply
          turn={s.turn}
          streamed={streamed}
          tools={s.tools}
          waiting={waiting}
          showReasoning={showReasoning}
        />
      )}
      {s.ended?.kind === 'failed' && (
        <div class="turn-error" role="alert" data-testid="turn-error">
          {s.ended.reason === 'no_model' ? (
            <>
              No model is set up yet, so nothing was sent. Add one in{' '}
              <a href="#/settings/models">Settings → Models</a>
              {/* After a reload the message is no longer in the box. */}
              {s.restore ? '; your message is kept below.' : '.'}
            </>
          ) : (
            <>
              The turn failed{s.ended.reason ? ` (${s.ended.reason})` : ''}:{' '}
              {s.ended.message ?? 'no reason given'}
            </>
          )}
        </div>
      )}
      {s.ended?.kind === 'interrupted' && !endsStopped(s.messages) && <StoppedNote />}
    </div>
  );
}
