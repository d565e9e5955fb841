/** The longest a call waits for Redis unless told otherwise, in ms. @internal */
export const DEFAULT_OPERATION_TIMEOUT = 100;

/** Settles like `promise`, or rejects after `ms` milliseconds without an answer. @internal */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  if (!(ms > 0) || !Number.isFinite(ms)) return promise;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** A short description of a failure, for one log line. @internal */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
