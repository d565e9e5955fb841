/**
 * How many microtask turns `call` takes to settle: the observable cost of a call's promise hops (a fast
 * path that saves a hop shows here, a deterministic count in V8).
 */
export async function microtaskTurns(call: Promise<unknown>): Promise<number> {
  let settled = false;
  void call.then(
    () => (settled = true),
    () => (settled = true),
  );
  let count = 0;
  while (!settled) {
    await Promise.resolve();
    count++;
  }
  return count;
}
