// The per-request context a handler gets from the connection, for handler unit tests.
// Test-only; main thread.
import type { HandlerContext } from '../../src/net/handler.js';

export function requestContext(apiKey: number, version: number): HandlerContext {
  return { header: { apiKey, apiVersion: version, correlationId: 1, clientId: 'test-client' }, version, clientHost: '/127.0.0.1', fileLeases: null };
}
