import { useEffect, useReducer } from 'preact/hooks';

/** A value that components can watch; `set` notifies every subscriber. */
export class Store<T> {
  private readonly subs = new Set<() => void>();
  constructor(private value: T) {}

  get(): T {
    return this.value;
  }

  set(next: T | ((old: T) => T)): void {
    this.value = typeof next === 'function' ? (next as (old: T) => T)(this.value) : next;
    for (const fn of [...this.subs]) fn();
  }

  subscribe(fn: () => void): () => void {
    this.subs.add(fn);
    return () => this.subs.delete(fn);
  }
}

/** Re-renders the component whenever the store changes. */
export function useStore<T>(store: Store<T>): T {
  const [, force] = useReducer((n: number) => n + 1, 0);
  useEffect(() => store.subscribe(() => force(0)), [store]);
  return store.get();
}
