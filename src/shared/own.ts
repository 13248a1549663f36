/**
 * The value a map holds under `key` itself: a name from a request or a file that is a key of
 * Object.prototype ("constructor", "toString", "__proto__") is as unknown as any other.
 */
export function own<T>(map: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}

const prototypeKeys = new Set(Object.getOwnPropertyNames(Object.prototype));

/** Whether a name is a key of Object.prototype: refused as the name of a config entry. */
export function isPrototypeKey(name: string): boolean {
  return prototypeKeys.has(name);
}
