import type { ComponentChildren, RefObject } from 'preact';
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';
import { focusHome } from '../lib/focus';

interface Props {
  /** Called on Escape (and whatever the content offers); the parent decides whether to close. */
  onClose: () => void;
  /** false: docked and non-modal (`show()`); the page behind stays usable. Default: modal. */
  modal?: boolean;
  class?: string;
  role?: 'dialog' | 'alertdialog';
  labelledBy: string;
  describedBy?: string;
  /** What gets focus on open; default the dialog itself (an Enter meant elsewhere presses nothing). */
  initialFocus?: RefObject<HTMLElement | null>;
  testId?: string;
  children: ComponentChildren;
}

/**
 * Every dialog and side panel: the native <dialog>. Modal ones come with a focus trap, an inert
 * page and Escape from the browser. Focus goes in when it opens and back to what opened it when
 * it closes (or to the page's home for focus when that is gone), never to <body>.
 */
export function Modal({
  onClose,
  modal = true,
  class: cls = 'dialog',
  role = 'dialog',
  labelledBy,
  describedBy,
  initialFocus,
  testId,
  children,
}: Props) {
  const ref = useRef<HTMLDialogElement>(null);
  const close = useRef(onClose);
  close.current = onClose;

  useLayoutEffect(() => {
    const d = ref.current!;
    const opener =
      document.activeElement instanceof HTMLElement && document.activeElement !== document.body
        ? document.activeElement
        : undefined;
    if (modal) d.showModal();
    else d.show();
    (initialFocus?.current ?? d).focus();
    return () => {
      if (d.open) d.close();
      // After Preact removes the dialog: give focus back unless the user already moved it elsewhere.
      queueMicrotask(() => {
        const now = document.activeElement;
        if (now && now !== document.body && document.contains(now)) return;
        if (opener && document.contains(opener) && !opener.closest('[inert]')) opener.focus();
        else focusHome();
      });
    };
  }, [modal]);

  useEffect(() => {
    const d = ref.current!;
    // Escape: a modal dialog gets `cancel`; a docked one only sees the key.
    const cancel = (e: Event) => {
      e.preventDefault();
      close.current();
    };
    // The browser keeps Tab out of the page behind a modal dialog but lets it leave for its own
    // toolbar (focus on <body> in the page): wrap around inside the dialog instead.
    const wrap = (e: KeyboardEvent) => {
      if (e.key !== 'Tab' || !modal) return;
      const items = [
        ...d.querySelectorAll<HTMLElement>(
          'a[href], button:not([disabled]), input:not([disabled]):not([type=hidden]), select:not([disabled]), textarea:not([disabled]), summary, [tabindex]:not([tabindex="-1"])',
        ),
      ].filter((el) => el.offsetParent !== null || el === document.activeElement);
      if (items.length === 0) return;
      const first = items[0]!;
      const last = items[items.length - 1]!;
      const at = document.activeElement;
      if (e.shiftKey && (at === first || at === d)) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && at === last) {
        e.preventDefault();
        first.focus();
      }
    };
    const key = (e: KeyboardEvent) => {
      if (e.key !== 'Escape' || modal || e.defaultPrevented) return;
      e.preventDefault();
      close.current();
    };
    d.addEventListener('cancel', cancel);
    d.addEventListener('keydown', wrap);
    // A docked panel closes on Escape from anywhere on the page, as a drawer does.
    document.addEventListener('keydown', key);
    return () => {
      d.removeEventListener('cancel', cancel);
      d.removeEventListener('keydown', wrap);
      document.removeEventListener('keydown', key);
    };
  }, [modal]);

  return (
    <dialog
      ref={ref}
      class={cls}
      role={role === 'alertdialog' ? 'alertdialog' : undefined}
      aria-labelledby={labelledBy}
      aria-describedby={describedBy}
      tabIndex={-1}
      data-testid={testId}
    >
      {children}
    </dialog>
  );
}
