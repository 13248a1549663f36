import { type Answer, api } from './api';
import { live, type LiveEvent } from './live';
import { Store } from './store';
import { dismissAbout } from './toast';
import type { Session } from './types';

export interface SessionList {
  items: Session[];
  next: string | null;
  loaded: boolean;
  error?: string;
}

/** The session list, newest first, kept current by the `sessions` topic. */
export const sessions = new Store<SessionList>({ items: [], next: null, loaded: false });

const byNewest = (a: Session, b: Session) =>
  a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0;

export async function loadSessions(): Promise<void> {
  try {
    const page = await api('GET', '/api/sessions', { query: { limit: 50 } });
    sessions.set({ items: page.items, next: page.next_cursor, loaded: true });
  } catch (err) {
    sessions.set((s) => ({ ...s, loaded: true, error: (err as Error).message }));
  }
}

export async function loadMoreSessions(): Promise<void> {
  const cursor = sessions.get().next;
  if (!cursor) return;
  const page = await api('GET', '/api/sessions', { query: { limit: 50, cursor } });
  sessions.set((s) => ({ ...s, items: mergeAll(s.items, page.items), next: page.next_cursor }));
}

function mergeAll(items: Session[], more: Session[]): Session[] {
  const seen = new Set(items.map((s) => s.id));
  return [...items, ...more.filter((s) => !seen.has(s.id))];
}

export function upsertSession(s: Session): void {
  sessions.set((l) => ({
    ...l,
    items: [s, ...l.items.filter((x) => x.id !== s.id)].sort(byNewest),
  }));
}

export function removeSession(id: string): void {
  sessions.set((l) => ({ ...l, items: l.items.filter((x) => x.id !== id) }));
}

function onEvent(e: LiveEvent): void {
  if (e.type === '$reset') return void loadSessions();
  // Restored elsewhere (the Trash page, another tab, the CLI): an Undo toast about it is settled.
  if (e.type === 'session.restored') dismissAbout(`deleted:${e.data.id}`);
  if (e.type === 'session.created' || e.type === 'session.updated' || e.type === 'session.restored')
    upsertSession(e.data);
  else if (e.type === 'session.deleted') removeSession(e.data.id);
}

let watching = false;
export function watchSessions(): void {
  if (watching) return;
  watching = true;
  live.on('sessions', onEvent);
  void loadSessions();
}

/** Puts a deleted session back from the trash; beside the old one if its place is taken. */
export async function restoreSession(trashId: string): Promise<Session | undefined> {
  const restore = '/api/trash/{id}/restore';
  let r: Answer<'POST', typeof restore>;
  try {
    r = await api('POST', restore, { params: { id: trashId } });
  } catch (err) {
    if ((err as { status?: number }).status !== 409) throw err;
    r = await api('POST', restore, { params: { id: trashId }, body: { as_new: true } });
  }
  if (r.session) upsertSession(r.session);
  // An Undo offered for this chat has nothing left to undo.
  if (r.session) dismissAbout(`deleted:${r.session.id}`);
  return r.session;
}
