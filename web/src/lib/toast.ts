import { Store } from './store';

export interface Toast {
  id: number;
  text: string;
  kind: 'info' | 'error';
  action?: { label: string; run: () => void };
  /** What the toast is about (`deleted:<session id>`), so it can go once that is settled elsewhere. */
  about?: string;
}

export const toasts = new Store<Toast[]>([]);
let next = 1;

export function dismiss(id: number): void {
  toasts.set((l) => l.filter((t) => t.id !== id));
}

/** Dismisses the toasts about something (an Undo for a trash item that was restored another way). */
export function dismissAbout(about: string): void {
  if (toasts.get().some((t) => t.about === about))
    toasts.set((l) => l.filter((t) => t.about !== about));
}

/** Shows a short message (with an optional action such as Undo) for `ms` milliseconds. */
export function toast(
  text: string,
  opts: { kind?: 'info' | 'error'; action?: Toast['action']; ms?: number; about?: string } = {},
): number {
  const id = next++;
  toasts.set((l) => [
    ...l.slice(-3),
    {
      id,
      text,
      kind: opts.kind ?? 'info',
      ...(opts.action ? { action: opts.action } : {}),
      ...(opts.about ? { about: opts.about } : {}),
    },
  ]);
  setTimeout(() => dismiss(id), opts.ms ?? 6000);
  return id;
}
