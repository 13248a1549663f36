import type { ComponentChildren } from 'preact';
import { useRef } from 'preact/hooks';
import { Modal } from './Modal';

/**
 * The app's own "are you sure?" (never the browser's confirm()): a title, what will happen, the
 * action and Cancel. Focus starts on Cancel, so an Enter meant elsewhere does nothing harmful;
 * Escape cancels.
 */
export function ConfirmDialog({
  title,
  children,
  action,
  danger = false,
  onConfirm,
  onCancel,
  testId,
}: {
  title: string;
  children: ComponentChildren;
  action: string;
  danger?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
  testId?: string;
}) {
  const cancel = useRef<HTMLButtonElement>(null);
  return (
    <Modal
      role="alertdialog"
      labelledBy="confirm-title"
      describedBy="confirm-body"
      initialFocus={cancel}
      onClose={onCancel}
      {...(testId ? { testId } : {})}
    >
      <h3 id="confirm-title">{title}</h3>
      <div id="confirm-body">{children}</div>
      <div class="actions">
        <button type="button" class={danger ? 'danger' : 'primary'} onClick={onConfirm}>
          {action}
        </button>
        <button type="button" ref={cancel} onClick={onCancel}>
          Cancel
        </button>
      </div>
      <p class="muted small key-hint">Escape cancels.</p>
    </Modal>
  );
}
