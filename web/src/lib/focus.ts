import { useEffect, useState } from 'preact/hooks';

/**
 * Where focus goes when the element that had it disappears (a dialog closed, a row deleted, a
 * button swapped): the view's marked home (the message box in a chat) or else its main region.
 * A keyboard user then goes on from there instead of from the top of the page.
 */
export function focusHome(): void {
  const home =
    document.querySelector<HTMLElement>('[data-focus-home]:not([disabled])') ??
    document.getElementById('main');
  home?.focus();
}

/** Whether a media query matches, kept current. */
export function useMedia(query: string): boolean {
  const [match, setMatch] = useState(() => matchMedia(query).matches);
  useEffect(() => {
    const m = matchMedia(query);
    const on = () => setMatch(m.matches);
    on();
    m.addEventListener('change', on);
    return () => m.removeEventListener('change', on);
  }, [query]);
  return match;
}

export const PHONE = '(max-width: 760px)';

/** Whether a key press belongs to a field (typing "/" or "?" in the message box must stay text). */
export function typing(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  return !!el && (el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName));
}

let homeWanted = false;
/** Asks the next view that mounts a focus home (the message box) to take focus: after New chat. */
export function wantHomeFocus(): void {
  homeWanted = true;
}
export function takeHomeFocus(): boolean {
  const w = homeWanted;
  homeWanted = false;
  return w;
}

/**
 * The safety net under every action: when the focused element is removed or disabled (a row
 * deleted, Stop swapped for Send, a busy button), focus would fall to <body> and a keyboard user
 * would start over from the top. Then it goes to the view's home instead. It runs after the
 * explicit moves (dialogs giving focus back), which win.
 */
export function keepFocus(root: HTMLElement): void {
  let last: HTMLElement | undefined;
  /** The dialog the focused element was in: focus stays in it while it is open. */
  let dialog: HTMLDialogElement | null = null;
  document.addEventListener('focusin', (e) => {
    if (!(e.target instanceof HTMLElement)) return;
    last = e.target;
    dialog = last.closest('dialog');
  });
  document.addEventListener('pointerdown', () => (last = undefined), true);
  let queued = false;
  new MutationObserver(() => {
    if (queued || !last) return;
    queued = true;
    setTimeout(() => {
      queued = false;
      if (!last || (document.activeElement && document.activeElement !== document.body)) return;
      if (document.contains(last) && !last.closest('[inert]')) {
        // Disabled while busy: it gets focus back once enabled again (a later mutation).
        if ((last as HTMLButtonElement).disabled !== true) last.focus();
        else if (dialog?.open) dialog.focus();
        return;
      }
      if (dialog?.open && document.contains(dialog)) dialog.focus();
      else focusHome();
    });
  }).observe(root, {
    subtree: true,
    childList: true,
    attributes: true,
    attributeFilter: ['disabled', 'inert', 'hidden'],
  });
}
