// The per-request context a handler gets from the connection, and the narrowing of a handler's
// result to a response body, for handler unit tests. Test-only; main thread.
import assert from 'node:assert/strict';
import { CloseConnection, NO_RESPONSE, type HandlerContext, type HandlerResult, type Wire } from '../../src/net/handler.js';

export function requestContext(apiKey: number, version: number): HandlerContext {
  return { header: { apiKey, apiVersion: version, correlationId: 1, clientId: 'test-client' }, version, clientHost: '/127.0.0.1', fileLeases: null };
}

/** The response body; fails the test when the handler answered nothing or closed the connection. */
export function answered<T>(r: HandlerResult<T>): Wire<T> {
  if (r === NO_RESPONSE || r instanceof CloseConnection) assert.fail('the handler sent no response');
  return r;
}
