import { useEffect, useRef, useState } from 'preact/hooks';
import { describe, upload, type Uploaded } from '../lib/api';
import { bytes } from '../lib/format';
import { takeHomeFocus } from '../lib/focus';
import { Icon } from './Icon';
import { McpPromptPicker } from './McpPromptPicker';
import { McpResourcePicker, type PickedResource } from './McpResourcePicker';
import type { McpResourceRef } from '../lib/chat';

interface Restore {
  text: string;
  attachments: string[];
  error?: string;
}

/**
 * The message box: Enter sends, Shift+Enter starts a new line. Files go to /api/upload first and
 * travel with the message by name. While a turn runs, Stop interrupts it. A message the server
 * could not take comes back (`restore`) instead of being lost. The box is the chat's focus home.
 */
export function Composer({
  running,
  restore,
  onSend,
  onInterrupt,
}: {
  running: boolean;
  restore?: Restore | undefined;
  onSend: (text: string, attachments: string[], resources: McpResourceRef[]) => Promise<void>;
  onInterrupt?: () => Promise<void>;
}) {
  const [text, setText] = useState('');
  const [files, setFiles] = useState<Uploaded[]>([]);
  const [uploading, setUploading] = useState(0);
  const [error, setError] = useState('');
  const [sending, setSending] = useState(false);
  const [prompts, setPrompts] = useState(false);
  const [resources, setResources] = useState<PickedResource[]>([]);
  const [resourcePicker, setResourcePicker] = useState(false);
  const picker = useRef<HTMLInputElement>(null);
  const area = useRef<HTMLTextAreaElement>(null);

  const canSend = !running && !sending && uploading === 0 && text.trim() !== '';

  useEffect(() => {
    if (takeHomeFocus()) area.current?.focus();
  }, []);
  useEffect(() => {
    if (!restore) return;
    // Only into an empty box: what someone typed since is not overwritten.
    setText((t) => (t.trim() ? t : restore.text));
    if (restore.error) setError(restore.error);
  }, [restore]);

  const send = async () => {
    if (!canSend) return;
    setSending(true);
    setError('');
    try {
      await onSend(
        text,
        files.map((f) => f.name),
        resources.map(({ server, uri }) => ({ server, uri })),
      );
      setText('');
      setFiles([]);
      setResources([]);
      if (area.current) {
        area.current.style.height = '';
        area.current.focus();
      }
    } catch (err) {
      setError(describe(err));
    } finally {
      setSending(false);
    }
  };

  const add = async (list: FileList | File[] | null) => {
    const chosen = list ? [...list] : [];
    if (chosen.length === 0) return;
    setUploading((n) => n + chosen.length);
    setError('');
    try {
      const done = await upload(chosen);
      setFiles((f) => [...f, ...done]);
    } catch (err) {
      setError(`Upload failed: ${describe(err)}`);
    } finally {
      setUploading((n) => n - chosen.length);
      if (picker.current) picker.current.value = '';
    }
  };

  const stop = async () => {
    // Stop is replaced by Send once the turn ends, which may come before the answer to this
    // request: the focus goes back to the box now, not to <body> or to Send.
    area.current?.focus();
    try {
      await onInterrupt?.();
    } catch (err) {
      setError(describe(err));
    }
  };

  return (
    <>
      {/* Outside the composer's form: the picker's own form must not submit the message. */}
      {prompts && (
        <McpPromptPicker
          onClose={() => setPrompts(false)}
          onPick={(t) => {
            setPrompts(false);
            setText((cur) => (cur.trim() ? `${cur}\n\n${t}` : t));
            // After the dialog has given focus back to its opener: the text is in the box.
            setTimeout(() => area.current?.focus(), 0);
          }}
        />
      )}
      {resourcePicker && (
        <McpResourcePicker
          onClose={() => setResourcePicker(false)}
          onPick={(r) => {
            setResourcePicker(false);
            setResources((l) =>
              l.some((x) => x.server === r.server && x.uri === r.uri) ? l : [...l, r],
            );
            setTimeout(() => area.current?.focus(), 0);
          }}
        />
      )}
      <form
        class="composer"
        onSubmit={(e) => {
          e.preventDefault();
          void send();
        }}
      >
        {(files.length > 0 || uploading > 0 || resources.length > 0) && (
          <div class="chips">
            {files.map((f) => (
              <span key={f.name} class="chip" data-testid="attachment-chip">
                <Icon name="file" /> {f.original_name}{' '}
                <span class="muted small">{bytes(f.size)}</span>
                <button
                  type="button"
                  class="icon"
                  aria-label={`Remove ${f.original_name}`}
                  onClick={() => setFiles((l) => l.filter((x) => x.name !== f.name))}
                >
                  <Icon name="close" />
                </button>
              </span>
            ))}
            {resources.map((r) => (
              <span key={`${r.server} ${r.uri}`} class="chip" data-testid="resource-chip">
                <Icon name="prompt" /> {r.label}
                <button
                  type="button"
                  class="icon"
                  aria-label={`Remove ${r.label}`}
                  onClick={() => setResources((l) => l.filter((x) => x !== r))}
                >
                  <Icon name="close" />
                </button>
              </span>
            ))}
            {uploading > 0 && <span class="chip muted">Uploading {uploading}…</span>}
          </div>
        )}
        {error && (
          <p class="error small" role="alert" data-testid="composer-error">
            {error}
          </p>
        )}
        <div class="composer-row">
          <button
            type="button"
            class="icon attach"
            aria-label="Attach files"
            title="Attach files"
            onClick={() => picker.current?.click()}
          >
            <Icon name="clip" />
          </button>
          <button
            type="button"
            class="icon attach"
            aria-label="Start from an MCP prompt"
            title="Start from an MCP prompt"
            data-testid="mcp-prompt-button"
            onClick={() => setPrompts(true)}
          >
            <Icon name="prompt" />
          </button>
          <button
            type="button"
            class="icon attach"
            aria-label="Attach an MCP resource"
            title="Attach an MCP resource"
            data-testid="mcp-resource-button"
            onClick={() => setResourcePicker(true)}
          >
            <Icon name="file" />
          </button>
          <input
            ref={picker}
            type="file"
            multiple
            hidden
            onChange={(e) => void add(e.currentTarget.files)}
            data-testid="file-input"
          />
          <textarea
            ref={area}
            rows={1}
            value={text}
            placeholder={running ? 'Working… (Stop interrupts)' : 'Message'}
            title="Enter sends; Shift+Enter starts a new line"
            aria-label="Message"
            data-focus-home
            data-testid="composer-input"
            onInput={(e) => {
              setText(e.currentTarget.value);
              const el = e.currentTarget;
              el.style.height = 'auto';
              el.style.height = `${Math.min(el.scrollHeight, 240)}px`;
            }}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
                e.preventDefault();
                void send();
              }
            }}
            onPaste={(e) => {
              const pasted = e.clipboardData?.files;
              if (pasted && pasted.length > 0) {
                e.preventDefault();
                void add(pasted);
              }
            }}
          />
          {running && onInterrupt ? (
            <button type="button" class="danger" onClick={stop} data-testid="interrupt">
              Stop
            </button>
          ) : (
            <button type="submit" class="primary" disabled={!canSend} data-testid="send">
              Send
            </button>
          )}
        </div>
      </form>
    </>
  );
}
