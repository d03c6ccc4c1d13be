// The inter-broker, controller and admin security settings as the configuration resolves and
// checks them: a SASL inter-broker listener or controller listener needs the inter-broker user and
// password file, a TLS one needs the CA peers are verified against (and a TLS controller listener
// the node's own certificate), an SSL controller listener needs client certificates required, the
// named listener must exist, and the admin HTTP's certificate and key go together.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveConfig } from '../../../src/config.js';

const CLUSTER = ['--controller-voters', '1@127.0.0.1:9093', '--node-id', '1'];
const LISTENERS = ['--listeners', 'SASL_SSL://127.0.0.1:9092,INTERNAL://127.0.0.1:9094', '--listener-security-protocol-map', 'INTERNAL:SASL_PLAINTEXT', '--ssl-cert-file', 'c.pem', '--ssl-key-file', 'k.pem'];

const USER = ['--inter-broker-sasl-username', 'broker', '--inter-broker-sasl-password-file', 'pw'];

const refusal = (argv: readonly string[]): string => {
  try {
    resolveConfig(argv, {});
  } catch (err) {
    return String(err);
  }
  return '';
};

test('a cluster node whose only listeners authenticate reaches the others on the primary one, with credentials and a CA', () => {
  const refused = refusal([...CLUSTER, ...LISTENERS]);
  assert.match(refused, /a SASL inter-broker listener or controller-security-protocol needs inter-broker-sasl-username/);
  assert.match(refused, /a TLS inter-broker listener needs ssl-ca-file/);
  const { config } = resolveConfig([...CLUSTER, ...LISTENERS, ...USER, '--ssl-ca-file', 'ca.pem'], {});
  assert.equal(config.clientListeners[0]!.protocol, 'SASL_SSL');
});

test('a SASL inter-broker listener needs the user and its password file', () => {
  assert.match(refusal([...CLUSTER, ...LISTENERS, '--inter-broker-listener', 'INTERNAL']), /inter-broker-sasl-username and inter-broker-sasl-password-file/);
  const { config } = resolveConfig([...CLUSTER, ...LISTENERS, '--inter-broker-listener', 'INTERNAL', '--inter-broker-sasl-username', 'broker', '--inter-broker-sasl-password-file', 'pw'], {});
  assert.equal(config.interBrokerListener, 'INTERNAL');
  assert.equal(config.interBrokerSaslMechanism, 'SCRAM-SHA-512');
});

test('inter-broker-listener must name a listener; a TLS one needs ssl-ca-file', () => {
  assert.match(refusal([...LISTENERS, '--inter-broker-listener', 'NOPE']), /inter-broker-listener NOPE is not one of the listeners/);
  assert.match(refusal([...CLUSTER, ...LISTENERS, '--inter-broker-listener', 'SASL_SSL', ...USER]), /a TLS inter-broker listener needs ssl-ca-file/);
  const { config } = resolveConfig([...CLUSTER, ...LISTENERS, '--inter-broker-listener', 'SASL_SSL', ...USER, '--ssl-ca-file', 'ca.pem'], {});
  assert.equal(config.interBrokerListener, 'SASL_SSL');
});

test('controller-security-protocol: PLAINTEXT by default; SASL needs the inter-broker user, TLS the certificate, key and CA', () => {
  assert.equal(resolveConfig(CLUSTER, {}).config.controllerSecurityProtocol, 'PLAINTEXT');
  assert.match(refusal([...CLUSTER, '--controller-security-protocol', 'sasl_plaintext']), /controller-security-protocol needs inter-broker-sasl-username/);
  assert.equal(resolveConfig([...CLUSTER, '--controller-security-protocol', 'sasl_plaintext', ...USER], {}).config.controllerSecurityProtocol, 'SASL_PLAINTEXT');
  assert.match(refusal([...CLUSTER, '--controller-security-protocol', 'SASL_SSL', ...USER, '--ssl-cert-file', 'c.pem', '--ssl-key-file', 'k.pem']),
    /controller-security-protocol SASL_SSL needs ssl-cert-file, ssl-key-file and ssl-ca-file/);
  assert.match(refusal([...CLUSTER, '--controller-security-protocol', 'TLS']), /"TLS" must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL/);
});

test('an SSL controller listener authenticates by certificate only, so it needs ssl-client-auth required', () => {
  const tls = ['--controller-security-protocol', 'SSL', '--ssl-cert-file', 'c.pem', '--ssl-key-file', 'k.pem', '--ssl-ca-file', 'ca.pem'];
  assert.match(refusal([...CLUSTER, ...tls]), /needs ssl-client-auth required/);
  assert.equal(resolveConfig([...CLUSTER, ...tls, '--ssl-client-auth', 'required'], {}).config.controllerSecurityProtocol, 'SSL');
});

test('admin-ssl-cert-file and admin-ssl-key-file go together', () => {
  assert.match(refusal(['--admin-ssl-cert-file', 'c.pem']), /admin-ssl-cert-file and admin-ssl-key-file go together/);
  assert.equal(resolveConfig(['--admin-ssl-cert-file', 'c.pem', '--admin-ssl-key-file', 'k.pem'], {}).config.adminSslKeyFile, 'k.pem');
});
