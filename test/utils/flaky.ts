/**
 * A scripted function for tests: each call takes the next step: an Error (or any non-function value
 * marked with `throws`) is thrown, anything else is returned. The last step repeats.
 */
export interface Scripted<T> {
  (): Promise<T>;
  readonly calls: number;
}

export type Step<T> = { throws: unknown } | { returns: T };

export function scripted<T>(...steps: Step<T>[]): Scripted<T> {
  let calls = 0;
  const fn = (async () => {
    const step = steps[Math.min(calls, steps.length - 1)];
    calls++;
    if ('throws' in step) throw step.throws;
    return step.returns;
  }) as Scripted<T>;
  Object.defineProperty(fn, 'calls', { get: () => calls });
  return fn;
}

/** Fails `failures` times with `error`, then returns `value`. */
export function failTimes<T>(failures: number, value: T, error: unknown = new Error('transient')): Scripted<T> {
  return scripted<T>(...Array.from({ length: failures }, () => ({ throws: error })), { returns: value });
}

/** An error with a Node-style `code`, as the network stack throws. */
export function networkError(code: string): Error & { code: string } {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:1`), { code });
}

/** The promise's value, or the error it rejected with (so a test can await a failing call and read it). */
export function settle(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => value,
    (error: unknown) => error,
  );
}

/** Resolves after the promise continuations and I/O callbacks already queued have run. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Lets the event loop turn `count` times: enough for a request already on its way over loopback to reach
 * its server before a test asserts that none was sent.
 */
export async function turns(count = 20): Promise<void> {
  for (let i = 0; i < count; i++) await nextTurn();
}

/** A promise that has not settled after all pending continuations ran. */
export async function isPending(promise: Promise<unknown>): Promise<boolean> {
  const marker = Symbol('pending');
  const winner = await Promise.race([
    promise.then(
      () => 'settled',
      () => 'settled',
    ),
    nextTurn().then(() => marker),
  ]);
  return winner === marker;
}

/** A promise with its resolve and reject functions (Node 20 has no `Promise.withResolvers`). */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A small seeded PRNG (mulberry32): the same sequence for the same seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
