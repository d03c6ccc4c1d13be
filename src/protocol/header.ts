// Kafka request and response headers (main thread, framing layer).
// Request header v1 = apiKey, apiVersion, correlationId, clientId (classic nullable string even
// in v2, so any broker can read an ApiVersions header); v2 adds a tag buffer. Response header
// v0 = correlationId; v1 adds a tag buffer, except for ApiVersions, which always answers with
// v0 so that a client can parse the reply whatever version it sent (KIP-511).

import type { Reader } from './reader.js';
import type { Writer } from './writer.js';

export interface RequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
}

const API_VERSIONS_KEY = 18;

/** Reads a v1/v2 request header; `isFlexible(key, version)` selects v2 (a trailing tag buffer). */
export function readRequestHeader(
  r: Reader,
  isFlexible: (apiKey: number, apiVersion: number) => boolean,
): RequestHeader {
  const apiKey = r.int16();
  const apiVersion = r.int16();
  const correlationId = r.int32();
  const clientId = r.nullableString();
  if (isFlexible(apiKey, apiVersion)) r.skipTags();
  return { apiKey, apiVersion, correlationId, clientId };
}

export function writeRequestHeader(w: Writer, h: RequestHeader, flexible: boolean): void {
  w.int16(h.apiKey);
  w.int16(h.apiVersion);
  w.int32(h.correlationId);
  w.nullableString(h.clientId);
  if (flexible) w.uvarint(0);
}

function responseHeaderHasTags(apiKey: number, flexible: boolean): boolean {
  return flexible && apiKey !== API_VERSIONS_KEY;
}

export function writeResponseHeader(w: Writer, correlationId: number, apiKey: number, flexible: boolean): void {
  w.int32(correlationId);
  if (responseHeaderHasTags(apiKey, flexible)) w.uvarint(0);
}

/** Reads a response header and returns its correlation id. */
export function readResponseHeader(r: Reader, apiKey: number, flexible: boolean): number {
  const correlationId = r.int32();
  if (responseHeaderHasTags(apiKey, flexible)) r.skipTags();
  return correlationId;
}
