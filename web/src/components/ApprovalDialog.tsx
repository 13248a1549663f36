import { useState } from 'preact/hooks';
import { describe, needsKey } from '../lib/api';
import type { Approval } from '../lib/types';
import { KeyUnlock } from './KeyUnlock';
import { Modal } from './Modal';

type Decision = 'allow_once' | 'allow_session' | 'deny';

function show(input: unknown): string {
  if (typeof input === 'string') return input;
  try {
    return JSON.stringify(input, null, 2);
  } catch {
    return String(input);
  }
}

/**
 * A tool call waits for the user: allow it once, for the rest of this session, or deny it.
 * Focus goes to the dialog, not to a button: an Enter meant for the message box must not approve.
 * Escape denies, and the dialog says so. A screen reader reads the reason and the command with the title.
 */
export function ApprovalDialog({
  approval,
  more,
  onAnswer,
}: {
  approval: Approval;
  more: number;
  onAnswer: (d: Decision) => Promise<void>;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  /** The answer the person chose while the server still wants the key (and whether a key was refused). */
  const [keyFor, setKeyFor] = useState<{ decision: Decision; rejected: boolean } | null>(null);

  const answer = async (d: Decision, afterKey = false) => {
    setBusy(true);
    setError('');
    try {
      await onAnswer(d);
      setKeyFor(null);
    } catch (err) {
      if (needsKey(err)) setKeyFor({ decision: d, rejected: afterKey });
      else setError(describe(err));
    } finally {
      setBusy(false);
    }
  };
  const command = (approval.input as { command?: unknown } | null)?.command;
  return (
    <Modal
      key={approval.approval_id}
      role="alertdialog"
      labelledBy="approval-title"
      describedBy={`${approval.sandbox_notice ? 'approval-notice ' : ''}approval-reason approval-input`}
      testId="approval-dialog"
      onClose={() => !busy && void answer('deny')}
    >
      <h3 id="approval-title">
        Allow <code>{approval.tool}</code>?
      </h3>
      {approval.sandbox_notice && (
        <p class="error small" id="approval-notice" data-testid="sandbox-notice">
          {approval.sandbox_notice}
        </p>
      )}
      <p id="approval-reason">{approval.reason || 'This tool call needs your approval.'}</p>
      <pre class="approval-input" id="approval-input">
        {typeof command === 'string' ? command : show(approval.input)}
      </pre>
      {more > 0 && <p class="muted small">{more} more waiting after this one.</p>}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {keyFor && (
        <KeyUnlock
          what="Answering an approval"
          rejected={keyFor.rejected}
          onUnlocked={() => answer(keyFor.decision, true)}
        />
      )}
      <div class="actions">
        <button type="button" class="primary" disabled={busy} onClick={() => answer('allow_once')}>
          Allow once
        </button>
        <button type="button" disabled={busy} onClick={() => answer('allow_session')}>
          Allow for this session
        </button>
        <button
          type="button"
          class="danger"
          disabled={busy}
          onClick={() => answer('deny')}
          aria-keyshortcuts="Escape"
        >
          Deny
        </button>
      </div>
      <p class="muted small key-hint" data-testid="approval-escape">
        <kbd>Esc</kbd> denies this call.
      </p>
    </Modal>
  );
}
