// Which listeners the start-up warning names: non-loopback PLAINTEXT, SSL without a required
// client certificate, and an admin HTTP without a token; loopback and authenticating ones never.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ClientListener } from '../../../src/config.js';
import { exposureWarnings, isLoopbackHost, type ExposureSettings } from '../../../src/server/exposure_warnings.js';

const listener = (name: string, protocol: ClientListener['protocol'], host: string): ClientListener => ({ name, protocol, host, port: 9092 });
const settings = (over: Partial<ExposureSettings>): ExposureSettings => ({
  clientListeners: [], sslClientAuth: 'none', adminHost: '127.0.0.1', adminTokenFile: '', ...over,
});

test('loopback hosts', () => {
  for (const h of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST', '::ffff:127.0.0.1']) assert.ok(isLoopbackHost(h), h);
  for (const h of ['0.0.0.0', '::', '', '10.0.0.5', '192.168.1.2', 'broker.example.com', '::ffff:10.0.0.1', '128.0.0.1']) assert.ok(!isLoopbackHost(h), h);
});

test('nothing exposed on loopback, whatever the protocol', () => {
  const all = (['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const).map((p) => listener(p, p, '127.0.0.1'));
  assert.deepEqual(exposureWarnings(settings({ clientListeners: all })), []);
});

test('a non-loopback listener warns unless it authenticates clients', () => {
  const open = [listener('PLAINTEXT', 'PLAINTEXT', '0.0.0.0'), listener('SSL', 'SSL', '::'), listener('SASL_SSL', 'SASL_SSL', '0.0.0.0'), listener('INTERNAL', 'SASL_PLAINTEXT', '10.0.0.5')];
  const warned = exposureWarnings(settings({ clientListeners: open }));
  assert.equal(warned.length, 2, warned.join('\n'));
  assert.match(warned[0]!, /^listener PLAINTEXT \(PLAINTEXT\) on 0\.0\.0\.0:9092 accepts unauthenticated clients.*SASL_SSL/);
  assert.match(warned[1]!, /^listener SSL \(SSL\) on :::9092 .*--ssl-client-auth required/);
  assert.deepEqual(exposureWarnings(settings({ clientListeners: open, sslClientAuth: 'required' })).length, 1, 'mTLS authenticates');
  assert.deepEqual(exposureWarnings(settings({ clientListeners: open, sslClientAuth: 'requested' })).length, 2, 'a requested certificate may be left out');
});

test('the admin HTTP off loopback warns without a token', () => {
  const [warning] = exposureWarnings(settings({ adminHost: '0.0.0.0' }));
  assert.match(warning ?? '', /^admin HTTP on 0\.0\.0\.0 .*--admin-token-file/);
  assert.deepEqual(exposureWarnings(settings({ adminHost: '0.0.0.0', adminTokenFile: '/etc/sluice/token' })), []);
});
