/**
 * A catalogue whose entries are built on first read. The IPC and /ws catalogues hold some 1,100
 * zod schemas, about a third of what a process built at start (1.5 KB of heap each), while a
 * process uses a few of them: every process builds those few, when first sent or received.
 * The makers stay exported so a table can gather others' entries without building them (a
 * spread reads every value).
 */
export function lazyEntries<const T extends Record<string, () => unknown>>(
  makers: T,
): { readonly [K in keyof T]: ReturnType<T[K]> } {
  const entries = {} as { [K in keyof T]: ReturnType<T[K]> };
  for (const key of Object.keys(makers) as (keyof T & string)[]) {
    let built: { value: ReturnType<T[typeof key]> } | undefined;
    Object.defineProperty(entries, key, {
      enumerable: true,
      get: () => (built ??= { value: makers[key]!() as ReturnType<T[typeof key]> }).value,
    });
  }
  return entries;
}
