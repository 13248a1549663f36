import type { Ref } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { wantHomeFocus } from '../lib/focus';
import { ApiError, api, type BodyOf, describe } from '../lib/api';
import { platformLabel } from '../../../src/shared/config/platform-labels';
import { when } from '../lib/format';
import { go } from '../lib/router';
import {
  loadMoreSessions,
  removeSession,
  restoreSession,
  sessions,
  upsertSession,
} from '../lib/sessions';
import { useStore } from '../lib/store';
import { toast } from '../lib/toast';
import type { Session } from '../lib/types';
import { Icon } from './Icon';

export function SessionList({
  current,
  onPick,
  inert,
  listRef,
}: {
  current: string | undefined;
  onPick: () => void;
  inert?: boolean;
  listRef?: Ref<HTMLElement>;
}) {
  const list = useStore(sessions);
  const [busy, setBusy] = useState(false);
  const [importError, setImportError] = useState('');
  const file = useRef<HTMLInputElement>(null);

  /** A chat exported as JSON (here or on another svc) becomes a new chat, which opens. */
  const importChat = async (f: File | undefined) => {
    if (!f) return;
    setImportError('');
    setBusy(true);
    try {
      let doc: unknown;
      try {
        doc = JSON.parse(await f.text());
      } catch {
        throw new Error(
          `"${f.name}" is not a chat exported as JSON (Session → Export → Download as JSON makes one).`,
        );
      }
      // The file as it is: the server checks it and names what is wrong (a 400, below).
      const body = doc as BodyOf<'POST', '/api/sessions/import'>;
      const r = await api('POST', '/api/sessions/import', { body });
      upsertSession(r.session);
      const missing = r.missing_attachments.length;
      toast(
        `Imported "${r.session.title}".${
          missing ? ` ${missing} attachment${missing > 1 ? 's were' : ' was'} not in the file.` : ''
        }`,
      );
      onPick();
      wantHomeFocus();
      go(`chat/${r.session.id}`);
    } catch (err) {
      // A 400 is the file's fault (the server's message names the field): say so first.
      const notExport = err instanceof ApiError && err.status === 400;
      setImportError(
        `Could not import "${f.name}": ${
          notExport ? 'it is not a chat exported as JSON by svc (' : ''
        }${describe(err)}${notExport ? ')' : ''}`,
      );
    } finally {
      setBusy(false);
      if (file.current) file.current.value = '';
    }
  };

  const create = async () => {
    setBusy(true);
    try {
      const s = await api('POST', '/api/sessions');
      upsertSession(s);
      onPick();
      wantHomeFocus();
      go(`chat/${s.id}`);
    } catch (err) {
      toast(`Could not start a chat: ${describe(err)}`, { kind: 'error' });
    } finally {
      setBusy(false);
    }
  };

  const remove = async (s: Session) => {
    try {
      const r = await api('DELETE', '/api/sessions/{id}', { params: { id: s.id } });
      removeSession(s.id);
      if (current === s.id) {
        wantHomeFocus();
        go('chat');
      }
      toast(`Deleted "${s.title}".`, {
        ms: 10_000,
        about: `deleted:${s.id}`,
        action: {
          label: 'Undo',
          run: () => {
            restoreSession(r.trash_id).then(
              (back) => back && go(`chat/${back.id}`),
              (err) =>
                toast(
                  (err as { status?: number }).status === 404
                    ? `"${s.title}" is no longer in the trash: it was restored or deleted for good.`
                    : `Could not restore "${s.title}": ${describe(err)}`,
                  { kind: 'error' },
                ),
            );
          },
        },
      });
    } catch (err) {
      toast(`Could not delete: ${describe(err)}`, { kind: 'error' });
    }
  };

  return (
    <aside class="session-list" aria-label="Chats" ref={listRef} inert={inert}>
      <button type="button" class="block" onClick={create} disabled={busy}>
        + New chat
      </button>
      <button
        type="button"
        class="ghost block"
        onClick={() => file.current?.click()}
        disabled={busy}
        data-testid="import-chat"
      >
        Import chat
      </button>
      <input
        ref={file}
        type="file"
        accept=".json,application/json"
        hidden
        aria-label="Chat file to import (JSON)"
        data-testid="import-file"
        onChange={(e) => void importChat(e.currentTarget.files?.[0])}
      />
      {importError && (
        <p class="error" role="alert" data-testid="import-error">
          {importError}
        </p>
      )}
      {list.error && <p class="error">{list.error}</p>}
      {list.loaded && list.items.length === 0 && <p class="muted small">No chats yet.</p>}
      <ul>
        {list.items.map((s) => (
          <li
            key={s.id}
            class={s.id === current ? 'current' : ''}
            data-testid="session-item"
            data-id={s.id}
          >
            <a href={`#/chat/${s.id}`} onClick={onPick} title={s.title}>
              <span class="title">{s.title}</span>
              <span class="muted small">
                {s.channel && (
                  <span data-testid="session-channel">{platformLabel(s.channel)} · </span>
                )}
                {when(s.updated_at)}
              </span>
            </a>
            <button
              type="button"
              class="icon"
              aria-label={`Delete ${s.title}`}
              title="Delete"
              onClick={() => remove(s)}
            >
              <Icon name="trash" />
            </button>
          </li>
        ))}
      </ul>
      {list.next && (
        <button type="button" class="link" onClick={() => void loadMoreSessions()}>
          Show older chats
        </button>
      )}
    </aside>
  );
}
