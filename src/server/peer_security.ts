// Security between the nodes of a cluster, from the configuration (main thread, at start): how
// this node reaches other brokers' inter-broker listener and the controller listeners (TLS
// verified against ssl-ca-file with this node's own certificate offered for mTLS, SASL as the
// inter-broker user), and how its own controller listener authenticates and authorises them.
// The controller listener checks SASL against the inter-broker user and the password file alone,
// never the metadata's SCRAM credentials: the quorum must elect a leader, and brokers register,
// before any credential has been replicated. The inter-broker user is a super user everywhere
// (Kafka asks operators to list brokers in super.users; a cluster configured with an inter-broker
// user works without that step). Files are read once, here.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { MetadataImage } from '../cluster/metadata/image.js';
import type { PeerCredentials, PeerSecurity } from '../common/peer_socket.js';
import { isScramMechanism, scramCredential, secretsEqual, SCRAM_MIN_ITERATIONS, type ScramCredential } from '../common/sasl_mechanisms.js';
import { usesSasl, usesTls, type BrokerConfig, type ClientListener, type SecurityProtocol } from '../config.js';
import { AclAuthority } from '../net/acl_authority.js';
import type { ListenerSecurity } from '../net/kafka_server.js';
import { TlsMaterial } from '../net/listener_security.js';
import { FAILED_AUTHENTICATION_DELAY_MS, SaslAuthenticator, failedAuthenticationLog, type AuthenticationFailureMetrics } from '../net/sasl_session.js';


/** The listener other brokers' replica fetchers connect to: the one inter-broker-listener names, else the primary. */
export function interBrokerListener(config: Pick<BrokerConfig, 'clientListeners' | 'interBrokerListener'>): ClientListener {
  return config.clientListeners.find((l) => l.name === config.interBrokerListener) ?? config.clientListeners[0]!;
}

/** super-users, and the inter-broker user when one is configured. */
export function superUsersOf(config: BrokerConfig): Set<string> {
  const users = new Set(config.superUsers);
  if (config.interBrokerSaslUsername !== '') users.add(`User:${config.interBrokerSaslUsername}`);
  return users;
}

/** The inter-broker user and its password (the password file's first line). */
function interBrokerCredentials(config: BrokerConfig): PeerCredentials {
  const password = readFileSync(config.interBrokerSaslPasswordFile, 'utf8').split(/\r?\n/)[0] ?? '';
  return { mechanism: config.interBrokerSaslMechanism, username: config.interBrokerSaslUsername, password };
}

/** How this node connects to another node's listener of `protocol`. */
function peerSecurityFor(config: BrokerConfig, protocol: SecurityProtocol): PeerSecurity {
  const tls = !usesTls(protocol) ? null : {
    ca: readFileSync(config.sslCaFile, 'utf8'), cert: readFileSync(config.sslCertFile, 'utf8'), key: readFileSync(config.sslKeyFile, 'utf8'),
  };
  return { tls, sasl: usesSasl(protocol) ? interBrokerCredentials(config) : null };
}

/** How replica fetchers reach the other brokers' inter-broker listener. */
export function interBrokerPeerSecurity(config: BrokerConfig): PeerSecurity {
  return peerSecurityFor(config, interBrokerListener(config).protocol);
}

/** How brokers and voters reach the controller listeners. */
export function controllerPeerSecurity(config: BrokerConfig): PeerSecurity {
  return peerSecurityFor(config, config.controllerSecurityProtocol);
}

export interface ControllerListenerSecurity {
  readonly listener: ListenerSecurity;
  readonly acls: AclAuthority;
}

/** TLS, SASL (the inter-broker user only) and ACLs of this node's controller listener; null when it is PLAINTEXT. */
export function controllerListenerSecurity(
  config: BrokerConfig, image: () => MetadataImage, log: Logger, metrics: AuthenticationFailureMetrics,
): ControllerListenerSecurity | null {
  const protocol = config.controllerSecurityProtocol;
  if (protocol === 'PLAINTEXT') return null;
  const tls = usesTls(protocol) ? new TlsMaterial({ certFile: config.sslCertFile, keyFile: config.sslKeyFile, caFile: config.sslCaFile, clientAuth: config.sslClientAuth }) : null;
  let sasl: SaslAuthenticator | null = null;
  if (usesSasl(protocol)) {
    const own = interBrokerCredentials(config);
    const password = Buffer.from(own.password, 'utf8');
    // A credential made from the password file at start, with a fresh salt: SCRAM then proves both sides know it.
    const scram: ScramCredential | null = isScramMechanism(own.mechanism) ? scramCredential(own.mechanism, own.password, randomBytes(32), SCRAM_MIN_ITERATIONS) : null;
    sasl = new SaslAuthenticator(
      {
        mechanisms: [own.mechanism],
        scramCredential: (mechanism, user) => (user === own.username && mechanism === own.mechanism && scram !== null ? scram : undefined),
        plainPassword: (user, presented) => secretsEqual(password, presented) && user === own.username,
        maxReauthMs: 0,
        now: () => performance.now(),
      },
      FAILED_AUTHENTICATION_DELAY_MS,
      failedAuthenticationLog(log.child({ listener: 'CONTROLLER' }), metrics),
    );
  }
  // Never open to everyone: only brokers and controllers belong here, whatever clients may do.
  const acls = new AclAuthority({ superUsers: superUsersOf(config), allowEveryoneIfNoAclFound: false }, image);
  return { listener: { name: 'CONTROLLER', tls, sasl }, acls };
}
