import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { ChatState, Streamed, ToolLive } from '../lib/chat';
import type { Store } from '../lib/store';
import { useFollow } from '../lib/follow';
import { pure } from '../lib/pure';
import { chunksOf, type Row, rowsOf } from '../lib/transcript-rows';
import type { Message, MessageOf } from '../lib/types';
import { AssistantMessage } from './AssistantMessage';
import { LiveReply } from './LiveReply';
import { StoppedNote } from './StoppedNote';
import { ToolCard } from './ToolCard';
import { TurnDetails } from './TurnDetails';
import { UserMessage } from './UserMessage';

/** Whether a chunk holds messages of the running turn (they show its live tool state). */
const live = (rows: Row[], turnSeq: number | undefined) =>
  turnSeq !== undefined && rows.some((r) => r.m.seq > turnSeq);

/** The chat's last message is a reply cut short by Stop: it carries the one "stopped" marker. */
function endsStopped(messages: Message[]): boolean {
  const last = messages.at(-1);
  return last?.role === 'assistant' && last.content?.stop_reason === 'interrupted';
}

interface ItemProps {
  m: Message;
  results: ReadonlyMap<string, MessageOf<'tool'>> | undefined;
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
  rows: Row[];
  /**
   * The chunk a reply is committed into: always laid out, so a reply that leaves the live view
   * for it keeps its height (a skipped chunk would keep its old one, and the scroll would jump).
   */
  newest: boolean;
  /** The running turn's first seq, its live tool state and waiting approvals: only for the chunk holding its messages. */
  turnSeq: number | undefined;
  tools: Record<string, ToolLive> | undefined;
  waiting: Set<string> | undefined;
  showReasoning: boolean;
}

/**
 * Some messages of the chat. Its props keep their identity until one of its own rows changes, so
 * a streamed frame, a new message or a turn's end skips every chunk it does not touch.
 */
const Chunk = pure(function Chunk({
  rows,
  newest,
  turnSeq,
  tools,
  waiting,
  showReasoning,
}: ChunkProps) {
  const items = [];
  for (const { m, results, folded, end } of rows) {
    if (!folded) {
      const current = turnSeq !== undefined && m.seq > turnSeq;
      items.push(
        <div key={m.id} class="msg-item" data-message-id={m.id}>
          <MessageItem
            m={m}
            results={results}
            tools={current ? tools : undefined}
            waiting={current ? waiting : undefined}
            showReasoning={showReasoning}
          />
        </div>,
      );
    }
    if (end) items.push(<TurnDetails key={`t${m.id}`} t={end} />);
  }
  return <div class={newest ? 'chunk newest' : 'chunk'}>{items}</div>;
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
  // A reader at the bottom stays there as messages come and as the live reply grows (it draws
  // its frames alone, so it calls `follow` itself).
  const { follow, onKeyDown, onScroll, release } = useFollow(box, !focus);
  /**
   * How many of the oldest chunks are not drawn yet: until the first idle moment after the chat
   * loads, all but the newest FIRST_CHUNKS. A new message never hides a chunk that was drawn.
   */
  const [hidden, setHidden] = useState<number | undefined>(undefined);
  const rows = useMemo(() => rowsOf(s.messages, s.turns), [s.messages, s.turns]);
  const lastChunks = useRef<Row[][]>([]);
  const chunked = useMemo(() => {
    lastChunks.current = chunksOf(rows, CHUNK, lastChunks.current);
    return lastChunks.current;
  }, [rows]);
  /** The message a search result opened, once it is found and marked. */
  const shown = useRef<string | undefined>(undefined);
  const chunks = chunked.length;
  const first = hidden ?? Math.max(0, chunks - FIRST_CHUNKS);

  // A search result opens the chat at its message: its chunk is drawn, then it is scrolled to
  // the middle, marked, and focused (so a screen reader reads it). A tool output folded into its
  // call's card is shown as that card.
  const target = useMemo(() => {
    if (!focus) return undefined;
    const at = rows.findIndex((r) => r.m.id === focus);
    if (at < 0) return undefined;
    if (!rows[at]!.folded) return { id: focus, at };
    for (let i = at - 1; i >= 0; i--)
      if ([...(rows[i]!.results?.values() ?? [])].some((t) => t.id === focus))
        return { id: rows[i]!.m.id, at: i };
    return undefined;
  }, [focus, rows]);
  useEffect(() => {
    if (target) setHidden((h) => Math.min(h ?? first, Math.floor(target.at / CHUNK)));
  }, [target, first]);
  useLayoutEffect(() => {
    if (!target || shown.current === focus) return;
    const el = box.current?.querySelector<HTMLElement>(
      `[data-message-id="${CSS.escape(target.id)}"]`,
    );
    if (!el) return;
    shown.current = focus;
    release();
    for (const old of box.current?.querySelectorAll('.msg-item.found') ?? [])
      old.classList.remove('found');
    el.classList.add('found');
    el.tabIndex = -1;
    el.scrollIntoView({ block: 'center' });
    el.focus({ preventScroll: true });
  });

  useLayoutEffect(follow);

  useEffect(() => {
    if (chunks === 0) return;
    if (first === 0) return void (hidden === undefined && setHidden(0));
    return whenIdle(() => setHidden(first - 1));
  }, [first, chunks, hidden]);

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
      onKeyDown={onKeyDown}
      onScroll={onScroll}
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
                rows={chunked[c]!}
                newest={c === chunks - 1}
                {...(live(chunked[c]!, s.turnSeq)
                  ? { turnSeq: s.turnSeq, tools: s.tools, waiting }
                  : { turnSeq: undefined, tools: undefined, waiting: undefined })}
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
          onDrawn={follow}
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
