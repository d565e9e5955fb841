import type { CancellationSource } from '../../core/index.js';

/** The parts of a Node `ServerResponse` (Express's, or Fastify's `reply.raw`) the scope reads. @internal */
export type RawResponse = NodeJS.EventEmitter & { readonly writableFinished?: boolean; readonly closed?: boolean };

const CLIENT_CLOSED = 'The client closed the connection.';

/**
 * The cancellation scope of a call made for an HTTP request: aborted when the client closes the
 * connection before the response is written, or when `abort()` is called (an unsubscribe). Nothing is
 * allocated and nothing listens to the response unless somebody reads the signal: a handler that never
 * looks at it costs one small object.
 *
 * @internal
 */
export class ResponseCancellationScope implements CancellationSource {
  private controller: AbortController | undefined;
  private abortedBy: unknown;

  constructor(private readonly response: RawResponse | undefined) {}

  get aborted(): boolean {
    if (this.abortedBy !== undefined) return true;
    const response = this.response;
    if (response?.closed === true && response.writableFinished !== true) this.abort(clientClosed());
    return this.abortedBy !== undefined;
  }

  get reason(): unknown {
    return this.aborted ? this.abortedBy : undefined;
  }

  get signal(): AbortSignal {
    if (this.controller) return this.controller.signal;
    const controller = (this.controller = new AbortController());
    if (this.aborted) {
      controller.abort(this.abortedBy);
    } else if (this.response) {
      const response = this.response;
      // 'close' also comes after a normal end; the listener goes with the response.
      response.once('close', () => {
        if (response.writableFinished !== true) this.abort(clientClosed());
      });
    }
    return controller.signal;
  }

  abort(reason: unknown): void {
    if (this.abortedBy !== undefined) return;
    this.abortedBy = reason;
    this.controller?.abort(reason);
  }
}

/** The reason a call ends with when its HTTP client goes away. @internal */
export function clientClosed(): DOMException {
  return new DOMException(CLIENT_CLOSED, 'AbortError');
}
