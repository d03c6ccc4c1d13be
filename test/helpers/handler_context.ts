// The per-request context a handler gets from the connection, and the narrowing of a handler's
// result to a response body, for handler unit tests. Test-only; main thread.
import assert from 'node:assert/strict';
import type { Api } from '../../src/protocol/schema.js';
import { Reader } from '../../src/protocol/reader.js';
import { CloseConnection, EncodedBody, NO_RESPONSE, type HandlerContext, type HandlerResult, type Wire } from '../../src/net/handler.js';

export function requestContext(apiKey: number, version: number): HandlerContext {
  return { header: { apiKey, apiVersion: version, correlationId: 1, clientId: 'test-client' }, version, clientHost: '/127.0.0.1', fileLeases: null };
}

/** The response body; fails the test when the handler answered nothing, closed the connection or answered pre-encoded bytes. */
export function answered<T>(r: HandlerResult<T>): Wire<T> {
  if (r === NO_RESPONSE || r instanceof CloseConnection) assert.fail('the handler sent no response');
  if (r instanceof EncodedBody) assert.fail('the handler answered pre-encoded bytes: decode them with encodedAnswer()');
  return r;
}

/** A pre-encoded response body, decoded as a client would; fails the test for any other answer. */
export function encodedAnswer<T>(api: Api<unknown, T>, version: number, r: HandlerResult<T>): T {
  if (!(r instanceof EncodedBody)) assert.fail('the handler did not answer pre-encoded bytes');
  return api.decodeResponse(version, new Reader(Buffer.concat(r.chunks)));
}
