import { inspect } from 'node:util';
import { Assertion } from 'uvu/assert';

/*
 * What a call failed with, for the test to check; the test fails if it succeeds instead. An
 * `assert.unreachable` inside a `try` is seen by its own `catch`, whose check may even match the
 * assertion's message, so code that wrongly succeeded could pass: here the "it succeeded" failure
 * is thrown outside any catch.
 */

function succeeded(what: string, value: unknown): Assertion {
  return new Assertion({
    message: `${what}, but it succeeded with ${inspect(value, { depth: 2 }).slice(0, 300)}`,
    operator: 'rejects',
    expects: 'a rejection',
    actual: value,
  });
}

/** The reason `p` rejected; `what` says what should have made it reject. */
export async function rejection(p: Promise<unknown>, what: string): Promise<unknown> {
  let value: unknown;
  try {
    value = await p;
  } catch (err) {
    return err;
  }
  throw succeeded(what, value);
}

/** What `fn` threw; `what` says what should have made it throw. */
export function thrown(fn: () => unknown, what: string): unknown {
  let value: unknown;
  try {
    value = fn();
  } catch (err) {
    return err;
  }
  throw succeeded(what, value);
}
