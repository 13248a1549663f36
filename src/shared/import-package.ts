declare global {
  /** Lent by the bundle's loader (release/code-loader.ts); undefined outside the bundle. */
  var __svcImport: ((specifier: string) => Promise<unknown>) | undefined;
}

/**
 * `import()` of a package or file at run time. In the bundle, svc's code runs compiled from V8's
 * code cache (release/code-loader.ts), where a plain `import()` has no module loader to call: the
 * loader lends its own. From tsc's output (tests, a checkout built with tsc alone) it is `import()`.
 * The build refuses a bundle with a plain `import()` of a package in it.
 */
export function importPackage<T>(specifier: string): Promise<T> {
  const lent = globalThis.__svcImport;
  return (lent ? lent(specifier) : import(specifier)) as Promise<T>;
}
