// The inter-broker and admin security settings as the configuration resolves and checks them:
// a cluster node's replica fetchers need a PLAINTEXT or SASL_PLAINTEXT listener, a SASL one needs
// the inter-broker user and password file, the named listener must exist, and the admin HTTP's
// certificate and key go together.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveConfig } from '../../../src/config.js';

const CLUSTER = ['--controller-voters', '1@127.0.0.1:9093', '--node-id', '1'];
const LISTENERS = ['--listeners', 'SASL_SSL://127.0.0.1:9092,INTERNAL://127.0.0.1:9094', '--listener-security-protocol-map', 'INTERNAL:SASL_PLAINTEXT', '--ssl-cert-file', 'c.pem', '--ssl-key-file', 'k.pem'];

const refusal = (argv: readonly string[]): string => {
  try {
    resolveConfig(argv, {});
  } catch (err) {
    return String(err);
  }
  return '';
};

test('a cluster node whose only listeners authenticate needs inter-broker-listener', () => {
  assert.match(refusal([...CLUSTER, ...LISTENERS]), /needs a PLAINTEXT listener \(or inter-broker-listener/);
});

test('a SASL inter-broker listener needs the user and its password file', () => {
  assert.match(refusal([...CLUSTER, ...LISTENERS, '--inter-broker-listener', 'INTERNAL']), /inter-broker-sasl-username and inter-broker-sasl-password-file/);
  const { config } = resolveConfig([...CLUSTER, ...LISTENERS, '--inter-broker-listener', 'INTERNAL', '--inter-broker-sasl-username', 'broker', '--inter-broker-sasl-password-file', 'pw'], {});
  assert.equal(config.interBrokerListener, 'INTERNAL');
  assert.equal(config.interBrokerSaslMechanism, 'SCRAM-SHA-512');
});

test('inter-broker-listener must name a listener; TLS ones are refused for now', () => {
  assert.match(refusal([...LISTENERS, '--inter-broker-listener', 'NOPE']), /inter-broker-listener NOPE is not one of the listeners/);
  assert.match(refusal([...CLUSTER, ...LISTENERS, '--inter-broker-listener', 'SASL_SSL', '--inter-broker-sasl-username', 'b', '--inter-broker-sasl-password-file', 'pw']), /needs a PLAINTEXT listener/);
});

test('admin-ssl-cert-file and admin-ssl-key-file go together', () => {
  assert.match(refusal(['--admin-ssl-cert-file', 'c.pem']), /admin-ssl-cert-file and admin-ssl-key-file go together/);
  assert.equal(resolveConfig(['--admin-ssl-cert-file', 'c.pem', '--admin-ssl-key-file', 'k.pem'], {}).config.adminSslKeyFile, 'k.pem');
});
