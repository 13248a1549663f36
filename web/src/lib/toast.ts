import { Store } from './store';

export interface Toast {
  id: number;
  text: string;
  kind: 'info' | 'error';
  action?: { label: string; run: () => void };
}

export const toasts = new Store<Toast[]>([]);
let next = 1;

export function dismiss(id: number): void {
  toasts.set((l) => l.filter((t) => t.id !== id));
}

/** Shows a short message (with an optional action such as Undo) for `ms` milliseconds. */
export function toast(text: string, opts: { kind?: 'info' | 'error'; action?: Toast['action']; ms?: number } = {}): number {
  const id = next++;
  toasts.set((l) => [...l.slice(-3), { id, text, kind: opts.kind ?? 'info', ...(opts.action ? { action: opts.action } : {}) }]);
  setTimeout(() => dismiss(id), opts.ms ?? 6000);
  return id;
}
