// DescribeUserScramCredentials (key 50) and AlterUserScramCredentials (key 51) wire schemas, v0,
// flexible (KIP-554). Mechanisms travel as int8: 1 = SCRAM-SHA-256, 2 = SCRAM-SHA-512 (0 unknown).
// An upsertion carries the salt and the salted password (PBKDF2 output), never the password: the
// broker derives StoredKey and ServerKey from it. Main thread.

import { pbkdf2Sync } from 'node:crypto';
import { defineApi } from '../schema.js';

/** KIP-554's mechanism codes. */
export const SCRAM_MECHANISM_CODES = { 'SCRAM-SHA-256': 1, 'SCRAM-SHA-512': 2 } as const;

/** SaltedPassword (RFC 5802): PBKDF2-HMAC of the password's UTF-8 bytes with the mechanism's hash, as an upsertion carries it. */
export function scramSaltedPassword(mechanism: keyof typeof SCRAM_MECHANISM_CODES, password: string, salt: Buffer, iterations: number): Buffer {
  const [hash, bytes] = mechanism === 'SCRAM-SHA-256' ? ['sha256', 32] as const : ['sha512', 64] as const;
  return pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, bytes, hash);
}

export interface DescribeUserScramCredentialsRequest {
  /** null: every user with a credential. */
  users: Array<{ name: string }> | null;
}

export interface DescribeUserScramCredentialsResult {
  user: string;
  errorCode: number;
  errorMessage: string | null;
  credentialInfos: Array<{ mechanism: number; iterations: number }>;
}

export interface DescribeUserScramCredentialsResponse {
  throttleTimeMs: number;
  errorCode: number;
  errorMessage: string | null;
  results: DescribeUserScramCredentialsResult[];
}

export const DescribeUserScramCredentialsApi = defineApi<DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse>({
  apiKey: 50,
  name: 'DescribeUserScramCredentials',
  minVersion: 0,
  maxVersion: 0,
  flexibleVersions: '0+',
  request: [
    { name: 'users', type: [{ name: 'name', type: 'string', versions: '0+' }], array: true, versions: '0+', nullableVersions: '0+' },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
    {
      name: 'results', type: [
        { name: 'user', type: 'string', versions: '0+' },
        { name: 'errorCode', type: 'int16', versions: '0+' },
        { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
        {
          name: 'credentialInfos', type: [
            { name: 'mechanism', type: 'int8', versions: '0+' },
            { name: 'iterations', type: 'int32', versions: '0+' },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
  ],
});

export interface ScramDeletion {
  name: string;
  mechanism: number;
}

export interface ScramUpsertion {
  name: string;
  mechanism: number;
  iterations: number;
  salt: Buffer;
  saltedPassword: Buffer;
}

export interface AlterUserScramCredentialsRequest {
  deletions: ScramDeletion[];
  upsertions: ScramUpsertion[];
}

export interface AlterUserScramCredentialsResult {
  user: string;
  errorCode: number;
  errorMessage: string | null;
}

export interface AlterUserScramCredentialsResponse {
  throttleTimeMs: number;
  results: AlterUserScramCredentialsResult[];
}

export const AlterUserScramCredentialsApi = defineApi<AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse>({
  apiKey: 51,
  name: 'AlterUserScramCredentials',
  minVersion: 0,
  maxVersion: 0,
  flexibleVersions: '0+',
  request: [
    {
      name: 'deletions', type: [
        { name: 'name', type: 'string', versions: '0+' },
        { name: 'mechanism', type: 'int8', versions: '0+' },
      ], array: true, versions: '0+',
    },
    {
      name: 'upsertions', type: [
        { name: 'name', type: 'string', versions: '0+' },
        { name: 'mechanism', type: 'int8', versions: '0+' },
        { name: 'iterations', type: 'int32', versions: '0+' },
        { name: 'salt', type: 'bytes', versions: '0+' },
        { name: 'saltedPassword', type: 'bytes', versions: '0+' },
      ], array: true, versions: '0+',
    },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    {
      name: 'results', type: [
        { name: 'user', type: 'string', versions: '0+' },
        { name: 'errorCode', type: 'int16', versions: '0+' },
        { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
      ], array: true, versions: '0+',
    },
  ],
});
