// SaslHandshake (key 17, v0-1) and SaslAuthenticate (key 36, v0-2; flexible from v2) wire
// schemas. A v0 handshake means the SASL tokens that follow travel raw (a 4-byte length and the
// token, no request header), KIP-43's framing; a v1 handshake means they travel in
// SaslAuthenticate requests. SaslAuthenticate v1 adds session_lifetime_ms (KIP-368,
// re-authentication). Main thread.

import { defineApi } from '../schema.js';

export interface SaslHandshakeRequest {
  mechanism: string;
}

export interface SaslHandshakeResponse {
  errorCode: number;
  /** The mechanisms this listener enables. */
  mechanisms: string[];
}

export const SaslHandshakeApi = defineApi<SaslHandshakeRequest, SaslHandshakeResponse>({
  apiKey: 17,
  name: 'SaslHandshake',
  minVersion: 0,
  maxVersion: 1,
  flexibleVersions: 'none',
  request: [
    { name: 'mechanism', type: 'string', versions: '0+' },
  ],
  response: [
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'mechanisms', type: 'string', array: true, versions: '0+' },
  ],
});

export interface SaslAuthenticateRequest {
  authBytes: Buffer;
}

export interface SaslAuthenticateResponse {
  errorCode: number;
  errorMessage: string | null;
  authBytes: Buffer;
  /** v1+: how long the session lasts before the client must re-authenticate; 0: no limit. */
  sessionLifetimeMs: number;
}

export const SaslAuthenticateApi = defineApi<SaslAuthenticateRequest, SaslAuthenticateResponse>({
  apiKey: 36,
  name: 'SaslAuthenticate',
  minVersion: 0,
  maxVersion: 2,
  flexibleVersions: '2+',
  request: [
    { name: 'authBytes', type: 'bytes', versions: '0+' },
  ],
  response: [
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+' },
    { name: 'authBytes', type: 'bytes', versions: '0+' },
    { name: 'sessionLifetimeMs', type: 'int64', versions: '1+', default: 0 },
  ],
});
