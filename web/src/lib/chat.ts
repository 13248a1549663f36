import { type Answer, ApiError, api, type BodyOf, describe } from './api';
import { live, type LiveEvent } from './live';
import { Store } from './store';
import {
  type Approval,
  type Goal,
  type Message,
  messageOf,
  type Session,
  type Spend,
} from './types';

/** An MCP server's resource attached to a message: read by the agent worker, sent with it. */
export type McpResourceRef = NonNullable<
  BodyOf<'POST', '/api/chat/{id}/turn'>['resources']
>[number];

/** A tool call of the running step, before its assistant message is committed. */
export interface PendingCall {
  call_id: string;
  name: string;
  arguments?: string;
}

/** What a tool call did live: its terminal output as it came, and its result once known. */
export interface ToolLive {
  output: string;
  result?: { output: string; is_error: boolean };
}

export interface LiveTurn {
  id: string;
  calls: PendingCall[];
}

/**
 * Text and reasoning of the step being streamed (a committed message takes them over). They are
 * kept apart from the chat's state: a delta redraws the live reply alone, not the chat around it.
 */
export interface Streamed {
  text: string;
  reasoning: string;
}
/**
 * The least time between two drawings of streamed text (ms): 20 a second reads as smooth, and a
 * slow phone keeps most frames for scrolling and typing (a drawing costs it ~15 ms at 4x
 * throttling: bench/web-stream).
 */
const STREAM_MS = 50;
const NOTHING_STREAMED: Streamed = { text: '', reasoning: '' };

export interface ChatState {
  id: string;
  session: Session | undefined;
  messages: Message[];
  loading: boolean;
  /** The session is gone (deleted here or elsewhere). */
  gone: boolean;
  error: string | undefined;
  turn: LiveTurn | undefined;
  /** Live tool state of the current turn, by call id (reset when a turn starts). */
  tools: Record<string, ToolLive>;
  /** The seq of the message that started the current (or last live) turn. */
  turnSeq: number | undefined;
  approvals: Approval[];
  goal: Goal | null | undefined;
  goalNote: string | undefined;
  /** How the last turn ended when it did not complete. */
  ended: { kind: 'failed' | 'interrupted'; reason?: string; message?: string } | undefined;
  /** A message sent and not yet started by the server. */
  sending: { text: string; attachments: string[] } | undefined;
  /** A message the server took but never recorded (the turn failed first): back to the composer. */
  restore: { text: string; attachments: string[] } | undefined;
  /** The last thing to tell a screen reader (a reply done, a turn failed), politely. */
  announce: string;
  /** What the chat's model calls used and cost so far (refreshed when a turn ends). */
  spend: Spend | undefined;
  /** The newest turns by the seq of the message that started them: their details. */
  turns: ReadonlyMap<number, TurnInfo>;
}

/** A turn as GET /api/sessions/{id}/turns lists it. */
export type TurnInfo = Answer<'GET', '/api/sessions/{id}/turns'>['items'][number];

export type { Spend };

const OUTPUT_KEEP = 200_000;

/**
 * One open chat: its transcript from the REST API, and the live turn from the session's topic.
 * A reload (first open, new server epoch, resync) buffers events until the transcript arrives,
 * then replays them: committed messages are keyed by id, so nothing shows twice.
 */
export class ChatSession {
  readonly state: Store<ChatState>;
  /** What the running step streamed so far (see Streamed); reset with each step. */
  readonly streamed = new Store<Streamed>(NOTHING_STREAMED);
  private streamDraft: Streamed = NOTHING_STREAMED;
  private stop: (() => void) | undefined;
  private buffer: LiveEvent[] | undefined;
  private loadToken = 0;
  private notifyQueued = false;
  private streamTimer: ReturnType<typeof setTimeout> | undefined;
  /** When streamed text was last drawn (performance.now()). */
  private streamDrawn = -Infinity;
  private draft: ChatState;
  private subscribed = false;
  private onSubscribed: Array<() => void> = [];
  /** What was last sent, until its turn records it. */
  private unrecorded: { text: string; attachments: string[] } | undefined;

  constructor(readonly id: string) {
    this.draft = {
      id,
      session: undefined,
      messages: [],
      loading: true,
      gone: false,
      error: undefined,
      turn: undefined,
      tools: {},
      turnSeq: undefined,
      approvals: [],
      goal: undefined,
      goalNote: undefined,
      ended: undefined,
      sending: undefined,
      restore: undefined,
      announce: '',
      spend: undefined,
      turns: new Map(),
    };
    this.state = new Store(this.draft);
  }

  open(): void {
    this.stop = live.on(`session:${this.id}`, (e) => this.onEvent(e));
    void this.reload();
  }

  close(): void {
    this.stop?.();
    this.stop = undefined;
    clearTimeout(this.streamTimer);
    this.streamTimer = undefined;
    this.loadToken++;
  }

  private update(fn: (s: ChatState) => void, now = false): void {
    const next = { ...this.draft };
    fn(next);
    // A step that ends or begins (a new live turn, or none) starts with nothing streamed.
    if (next.turn?.id !== this.draft.turn?.id) this.streamDraft = NOTHING_STREAMED;
    this.draft = next;
    if (now) return this.flush();
    this.schedule();
  }

  /** Adds a delta to what the step streamed; drawn with the next frame. */
  private stream(turnId: string, add: Streamed): void {
    if (this.draft.turn?.id !== turnId)
      this.update((s) => void (s.turn = { id: turnId, calls: [] }));
    const was = this.streamDraft;
    this.streamDraft = { text: was.text + add.text, reasoning: was.reasoning + add.reasoning };
    this.scheduleStream();
  }

  /** A delta waits until STREAM_MS after the last drawn one (a state change draws it sooner). */
  private scheduleStream(): void {
    if (this.notifyQueued || this.streamTimer !== undefined) return;
    const wait = this.streamDrawn + STREAM_MS - performance.now();
    if (wait <= 0) return this.schedule();
    this.streamTimer = setTimeout(() => {
      this.streamTimer = undefined;
      this.schedule();
    }, wait);
  }

  private schedule(): void {
    // Deltas come fast: render at most once per frame.
    if (this.notifyQueued) return;
    this.notifyQueued = true;
    const run = () => this.flush();
    if (document.visibilityState === 'visible') requestAnimationFrame(run);
    else setTimeout(run, 50);
  }

  private flush(): void {
    this.notifyQueued = false;
    if (this.state.get() !== this.draft) this.state.set(this.draft);
    if (this.streamed.get() !== this.streamDraft) {
      this.streamDrawn = performance.now();
      this.streamed.set(this.streamDraft);
    }
  }

  /** Loads the session, its whole transcript and its goal; events meanwhile wait in a buffer. */
  async reload(): Promise<void> {
    const token = ++this.loadToken;
    this.buffer ??= [];
    try {
      // The session comes with its goal (null when none): no goal request, so no 404 in the console.
      const [session, messages, waiting, turns] = await Promise.all([
        api('GET', '/api/sessions/{id}', { params: { id: this.id } }),
        this.allMessages(),
        api('GET', '/api/sessions/{id}/approvals', { params: { id: this.id } }).catch(() => ({
          items: [] as Approval[],
        })),
        this.loadTurns().catch(() => ({ bySeq: new Map<number, TurnInfo>(), newest: undefined })),
      ]);
      if (token !== this.loadToken) return;
      const events = this.buffer ?? [];
      this.buffer = undefined;
      this.update((s) => {
        const { goal: embedded, spend, ...rest } = session;
        s.session = rest;
        s.spend = spend;
        s.turns = turns.bySeq;
        // How the last turn ended is on its row: a chat stopped before (during a tool call too,
        // where no cut reply carries the mark) shows its one "stopped" mark after a reload, and
        // one that failed shows its error box again.
        s.ended = endedOf(turns.newest);
        s.messages = messages;
        s.goal = embedded ?? null;
        // A page opened while a tool call waits shows the dialog at once, not only on live events.
        s.approvals = waiting.items;
        s.loading = false;
        s.error = undefined;
        s.gone = false;
        // What streamed before the reload is either committed now or will be again; start clean.
        s.turn = undefined;
      }, true);
      for (const e of events) this.apply(e);
    } catch (err) {
      if (token !== this.loadToken) return;
      this.buffer = undefined;
      const gone = err instanceof ApiError && err.status === 404;
      this.update((s) => {
        s.loading = false;
        s.gone = gone;
        s.error = gone ? undefined : describe(err);
      }, true);
    }
  }

  /** A turn ended: what the chat and its turns cost so far (a failed fetch keeps what was known). */
  private async refreshSpend(): Promise<void> {
    const [r, turns] = await Promise.all([
      api('GET', '/api/sessions/{id}', { params: { id: this.id } }).catch(() => undefined),
      this.loadTurns().catch(() => undefined),
    ]);
    this.update((s) => {
      if (r?.spend) s.spend = r.spend;
      if (turns) s.turns = sameTurns(s.turns, turns.bySeq);
    }, true);
  }

  /** The newest 200 turns' details by their first message (older turns show none), and the newest. */
  private async loadTurns(): Promise<{
    bySeq: ReadonlyMap<number, TurnInfo>;
    newest: TurnInfo | undefined;
  }> {
    const r = await api('GET', '/api/sessions/{id}/turns', {
      params: { id: this.id },
      query: { limit: 200 },
    });
    return {
      bySeq: new Map(r.items.flatMap((t) => (t.first_seq === null ? [] : [[t.first_seq, t]]))),
      newest: r.items[0],
    };
  }

  private async allMessages(): Promise<Message[]> {
    const out: Message[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 100; page++) {
      const r: Answer<'GET', '/api/sessions/{id}/messages'> = await api(
        'GET',
        '/api/sessions/{id}/messages',
        { params: { id: this.id }, query: { limit: 200, ...(cursor ? { cursor } : {}) } },
      );
      out.push(...r.items.map(messageOf));
      cursor = r.next_cursor;
      if (!cursor) break;
    }
    return out;
  }

  /** Resolves once the session's topic is subscribed and the transcript loaded (or after `ms`). */
  whenLive(ms: number): Promise<void> {
    if (this.subscribed) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.onSubscribed.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private onEvent(e: LiveEvent): void {
    if (e.type === '$reset') {
      void this.reload().then(() => {
        this.subscribed = true;
        for (const fn of this.onSubscribed.splice(0)) fn();
      });
      return;
    }
    if (this.buffer) this.buffer.push(e);
    else this.apply(e);
  }

  /** Applies one session event to the state; narrowing on `e.type` gives `e.data` its catalogued shape. */
  private apply(e: LiveEvent): void {
    const turnOf = (s: ChatState, turnId: string): LiveTurn => {
      if (!s.turn || s.turn.id !== turnId) s.turn = { id: turnId, calls: [] };
      else s.turn = { ...s.turn };
      return s.turn;
    };
    switch (e.type) {
      case 'turn.started': {
        const d = e.data;
        this.update((s) => {
          turnOf(s, d.turn_id);
          s.tools = {};
          s.turnSeq = d.message.seq;
          s.sending = undefined;
          s.ended = undefined;
          s.announce = '';
          s.messages = withMessage(s.messages, messageOf(d.message));
          this.unrecorded = undefined;
        });
        this.whole(messageOf(d.message));
        break;
      }
      case 'turn.text_delta': {
        const d = e.data;
        this.stream(d.turn_id, { text: d.delta, reasoning: '' });
        break;
      }
      case 'turn.reasoning_delta': {
        const d = e.data;
        this.stream(d.turn_id, { text: '', reasoning: d.delta });
        break;
      }
      case 'turn.tool_call_started':
      case 'turn.tool_call': {
        const d = e.data;
        this.update((s) => {
          const t = turnOf(s, d.turn_id);
          const call: PendingCall = {
            call_id: d.call_id,
            name: d.name,
            ...('arguments' in d ? { arguments: d.arguments } : {}),
          };
          const at = t.calls.findIndex((c) => c.call_id === call.call_id);
          t.calls =
            at < 0 ? [...t.calls, call] : t.calls.map((c, i) => (i === at ? { ...c, ...call } : c));
          // Some providers reuse call ids from step to step: a finished call's state is not this one's.
          if (e.type === 'turn.tool_call_started' && s.tools[call.call_id]?.result) {
            const { [call.call_id]: _, ...rest } = s.tools;
            s.tools = rest;
          }
        });
        break;
      }
      case 'terminal.output': {
        const d = e.data;
        this.update((s) => {
          const prev = s.tools[d.call_id] ?? { output: '' };
          let output = prev.output + d.chunk;
          if (output.length > OUTPUT_KEEP) output = output.slice(-OUTPUT_KEEP);
          s.tools = { ...s.tools, [d.call_id]: { ...prev, output } };
        });
        break;
      }
      case 'turn.tool_result': {
        const d = e.data;
        this.update((s) => {
          s.tools = {
            ...s.tools,
            [d.call_id]: {
              ...(s.tools[d.call_id] ?? { output: '' }),
              result: { output: d.output, is_error: d.is_error },
            },
          };
          s.messages = withMessage(s.messages, messageOf(d.message));
          s.approvals = s.approvals.filter((a) => a.call_id !== d.call_id);
        });
        // A long output came cut: its tool message, fetched whole, replaces it (and the live result).
        if (d.truncated || d.message.truncated)
          this.whole(messageOf({ ...d.message, truncated: true }));
        break;
      }
      case 'message.committed': {
        const m = messageOf(e.data.message);
        this.update((s) => {
          s.messages = withMessage(s.messages, m);
          if (m.role === 'assistant' && s.turn) {
            s.turn = { ...s.turn, calls: [] };
            this.streamDraft = NOTHING_STREAMED;
          }
        });
        this.whole(m);
        break;
      }
      case 'approval.requested': {
        const { truncated, ...d } = e.data;
        this.update((s) => {
          if (s.approvals.some((a) => a.approval_id === d.approval_id)) return;
          s.approvals = [...s.approvals, d];
        }, true);
        // The input came cut: the list of waiting approvals has it whole.
        if (truncated) void this.wholeApprovals();
        break;
      }
      case 'approval.withdrawn':
      case 'approval.expired': {
        const id = e.data.approval_id;
        this.update(
          (s) => void (s.approvals = s.approvals.filter((a) => a.approval_id !== id)),
          true,
        );
        break;
      }
      case 'turn.completed':
      case 'turn.failed':
      case 'turn.interrupted': {
        const d = e.data;
        this.update((s) => {
          if (s.turn && s.turn.id === d.turn_id) s.turn = undefined;
          s.approvals = s.approvals.filter(
            (a) => a.turn_id !== undefined && a.turn_id !== d.turn_id,
          );
          s.sending = undefined;
          s.ended =
            d.status === 'failed'
              ? { kind: 'failed', reason: d.reason, message: d.message }
              : d.status === 'interrupted'
                ? { kind: 'interrupted' }
                : undefined;
          if (d.status === 'failed' && this.unrecorded) s.restore = this.unrecorded;
          this.unrecorded = undefined;
          // A failure is an alert of its own (in the transcript); the status region says the rest.
          s.announce =
            d.status === 'completed'
              ? doneText(s.messages)
              : d.status === 'interrupted'
                ? 'Stopped.'
                : '';
        }, true);
        void this.refreshSpend();
        break;
      }
      case 'goal.updated': {
        const goal = e.data;
        this.update((s) => {
          s.goal = goal;
          s.goalNote = undefined;
        }, true);
        break;
      }
      case 'goal.cleared':
        this.update((s) => void (s.goal = null), true);
        break;
      case 'goal.paused': {
        const reason = e.data.reason;
        this.update((s) => void (s.goalNote = `Paused: ${reason.replace(/_/g, ' ')}`), true);
        break;
      }
      case 'session.updated':
      case 'session.restored': {
        const session = e.data;
        this.update((s) => {
          s.session = session;
          s.gone = false;
        }, true);
        break;
      }
      case 'session.deleted':
        this.update((s) => void (s.gone = true), true);
        break;
    }
  }

  /**
   * A message an event carried cut (over 4 KB): it shows at once as it came, then the whole from
   * REST replaces it, and a tool result's live state takes the whole output too.
   */
  private whole(m: Message): void {
    if (!m.truncated) return;
    const token = this.loadToken;
    api('GET', '/api/sessions/{id}/messages/{message_id}', {
      params: { id: this.id, message_id: m.id },
    }).then(
      (summary) => {
        const full = messageOf(summary);
        if (token !== this.loadToken) return; // a reload brought the whole transcript anyway
        this.update((s) => {
          if (s.messages.some((x) => x.id === full.id)) s.messages = withMessage(s.messages, full);
          if (full.role !== 'tool') return;
          const callId = full.content?.tool_call_id ?? '';
          const live = s.tools[callId];
          if (live?.result)
            s.tools = {
              ...s.tools,
              [callId]: {
                ...live,
                result: {
                  output: full.content?.output ?? '',
                  is_error: full.content?.is_error === true,
                },
              },
            };
        });
      },
      () => undefined, // gone meanwhile (deleted): nothing to show
    );
  }

  /** The waiting approvals, whole (an event carried an input cut). */
  private async wholeApprovals(): Promise<void> {
    const r = await api('GET', '/api/sessions/{id}/approvals', { params: { id: this.id } }).catch(
      () => undefined,
    );
    if (!r) return;
    this.update((s) => {
      const byId = new Map(r.items.map((a) => [a.approval_id, a]));
      s.approvals = s.approvals.map((a) => byId.get(a.approval_id) ?? a);
    }, true);
  }

  /** Sends a turn (with files and MCP resources attached); the server's events do the rest. */
  async send(text: string, attachments: string[], resources: McpResourceRef[] = []): Promise<void> {
    this.update((s) => {
      s.sending = { text, attachments };
      s.ended = undefined;
      s.restore = undefined;
    }, true);
    this.unrecorded = { text, attachments };
    try {
      await api('POST', '/api/chat/{id}/turn', {
        params: { id: this.id },
        query: { wait: 'false' },
        body: { message: text, attachments, ...(resources.length > 0 ? { resources } : {}) },
      });
    } catch (err) {
      this.unrecorded = undefined;
      this.update((s) => void (s.sending = undefined), true);
      throw err;
    }
  }

  async interrupt(): Promise<void> {
    await api('POST', '/api/chat/{id}/interrupt', { params: { id: this.id } });
  }

  async answer(
    approvalId: string,
    decision: 'allow_once' | 'allow_session' | 'deny',
  ): Promise<void> {
    try {
      await api('POST', '/api/sessions/{id}/approvals/{approval_id}', {
        params: { id: this.id, approval_id: approvalId },
        body: { decision },
      });
    } catch (err) {
      // Already answered elsewhere or withdrawn: nothing waits any more.
      if (!(err instanceof ApiError && err.status === 404)) throw err;
    }
    this.update(
      (s) => void (s.approvals = s.approvals.filter((a) => a.approval_id !== approvalId)),
      true,
    );
  }

  setSession(session: Session): void {
    this.update((s) => void (s.session = session), true);
  }

  setGoal(goal: Goal | null): void {
    this.update((s) => void (s.goal = goal), true);
  }
}

const queued = new Map<
  string,
  { text: string; attachments: string[]; resources?: McpResourceRef[] }
>();

/** A first message for a chat about to open: sent once the chat listens to its events. */
export function queueFirstMessage(
  id: string,
  text: string,
  attachments: string[],
  resources: McpResourceRef[] = [],
): void {
  queued.set(id, { text, attachments, resources });
}

export function takeQueuedMessage(
  id: string,
): { text: string; attachments: string[]; resources?: McpResourceRef[] } | undefined {
  const q = queued.get(id);
  queued.delete(id);
  return q;
}

/** How the newest turn ended, when it did not complete, as the chat shows it. */
function endedOf(turn: TurnInfo | undefined): ChatState['ended'] {
  if (turn?.status === 'interrupted') return { kind: 'interrupted' };
  if (turn?.status !== 'failed') return undefined;
  return {
    kind: 'failed',
    ...(turn.error ? { reason: turn.error.reason, message: turn.error.message } : {}),
  };
}

/** What a screen reader hears when a reply is done: the start of its last text. */
function doneText(messages: Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'user') break;
    if (m.role === 'assistant' && typeof m.content?.text === 'string' && m.content.text.trim())
      return `The reply is done: ${m.content.text.trim().slice(0, 200)}`;
  }
  return 'The reply is done.';
}

/** Adds or replaces a message, keeping the transcript ordered by seq. */
function withMessage(list: Message[], m: Message): Message[] {
  const at = list.findIndex((x) => x.id === m.id);
  if (at >= 0) return list.map((x, i) => (i === at ? m : x));
  const last = list[list.length - 1];
  if (!last || last.seq < m.seq) return [...list, m];
  return [...list, m].sort((a, b) => a.seq - b.seq);
}

/**
 * Turns as fetched again, keeping the object of each turn that did not change, so the chunks
 * showing them are not drawn again.
 */
function sameTurns(
  before: ReadonlyMap<number, TurnInfo>,
  after: ReadonlyMap<number, TurnInfo>,
): ReadonlyMap<number, TurnInfo> {
  const out = new Map<number, TurnInfo>();
  for (const [seq, t] of after) {
    const old = before.get(seq);
    out.set(seq, old && JSON.stringify(old) === JSON.stringify(t) ? old : t);
  }
  return out;
}
