// The broker's client listeners (main thread): one KafkaServer per configured listener
// (--listeners, or the single PLAINTEXT one on --kafka-addr), each with its own handler table
// (Metadata, FindCoordinator, DescribeCluster and KIP-951 hints name brokers by that listener's
// endpoints, and SASL listeners add SaslHandshake and SaslAuthenticate), its own per-IP
// connection bounds (Kafka applies them per listener), and its security: TLS from the shared
// certificate files, SASL with the enabled mechanisms against the metadata image's SCRAM
// credentials and PLAIN's user file; ACLs checked against the image's with super.users and
// allow.everyone.if.no.acl.found. The inter-broker SASL user is an implicit super user, so that
// other brokers' replica fetchers have CLUSTER_ACTION out of the box (on a PLAINTEXT inter-broker
// listener they are User:ANONYMOUS, which an operator enforcing ACLs must grant it, as in Kafka:
// a cluster node warns at start when nothing does). reload() (SIGHUP) reads certificates and PLAIN
// users again.
// A failed authentication is logged once per client address per interval, with the address,
// mechanism and reason, never a token.
// With a connection placement (--connection-placement shards) plaintext listeners without SASL
// hand their connections to the shards; TLS and SASL listeners keep theirs on main (said once).
import type { Logger } from 'pino';
import type { ImageClusterView } from '../cluster/metadata/image_view.js';
import { scramKey } from '../cluster/metadata/image.js';
import type { DescriptorBudget } from '../common/descriptor_budget.js';
import { usesSasl, usesTls, type BrokerConfig, type ClientListener } from '../config.js';
import type { BrokerMetrics } from '../metrics/metrics.js';
import type { ConnectionServices } from '../net/connection.js';
import { ConnectionQuotas, MAX_CONNECTION_THROTTLE_MS } from '../net/connection_quotas.js';
import { bindHandler } from '../net/handler.js';
import { buildHandlers, type BrokerServices } from '../net/handlers/index.js';
import { saslAuthenticateHandler, saslHandshakeHandler } from '../net/handlers/sasl.js';
import { KafkaServer, type ListenerAdmission } from '../net/kafka_server.js';
import { PlainUsers, TlsMaterial } from '../net/listener_security.js';
import type { NativeSender } from '../net/native_sender.js';
import type { ConnectionPlacement } from '../net/connection_placement.js';
import { FAILED_AUTHENTICATION_DELAY_MS, SaslAuthenticator, failedAuthenticationLog } from '../net/sasl_session.js';
import { AclAuthority } from '../net/acl_authority.js';
import { interBrokerListener, superUsersOf } from './peer_security.js';
import { ANONYMOUS_PRINCIPAL } from '../coordinator/acl/acl.js';
import { resolveConnectionRate } from '../coordinator/client_quotas.js';


export interface ClientListenerDeps {
  readonly services: BrokerServices;
  readonly connection: Omit<ConnectionServices, 'handlers'> & { readonly metrics: BrokerMetrics };
  /** The primary listener's view; the others are derived from it. */
  readonly view: ImageClusterView;
  readonly descriptors: DescriptorBudget;
  readonly native: NativeSender | null;
  /** Where plaintext listeners without SASL place their connections; null: every connection stays on main. */
  readonly placement: ConnectionPlacement | null;
  readonly log: Logger;
}

export interface ClientListenerServer {
  readonly listener: ClientListener;
  readonly server: KafkaServer;
  /** The port it binds (a configured 0 is reserved before registration). */
  readonly port: number;
}

export class ClientListeners {
  readonly servers: readonly ClientListenerServer[];
  private readonly tls: TlsMaterial | null;
  private readonly plainUsers: PlainUsers | null;

  constructor(config: BrokerConfig, ports: readonly number[], deps: ClientListenerDeps) {
    const { log } = deps;
    const secured = config.clientListeners;
    const anyTls = secured.some((l) => usesTls(l.protocol));
    const anySasl = secured.some((l) => usesSasl(l.protocol));
    this.tls = anyTls ? new TlsMaterial({ certFile: config.sslCertFile, keyFile: config.sslKeyFile, caFile: config.sslCaFile, clientAuth: config.sslClientAuth }) : null;
    this.plainUsers = anySasl && config.saslEnabledMechanisms.includes('PLAIN') ? new PlainUsers(config.saslPlainUsersFile) : null;
    const plainUsers = this.plainUsers;
    const authenticator = !anySasl ? null : new SaslAuthenticator(
      {
        mechanisms: config.saslEnabledMechanisms,
        scramCredential: (mechanism, user) => deps.view.image.scram.get(scramKey(mechanism, user)),
        plainPassword: (user, password) => plainUsers !== null && plainUsers.verify(user, password),
        maxReauthMs: config.connectionsMaxReauthMs,
        now: () => performance.now(),
      },
      FAILED_AUTHENTICATION_DELAY_MS,
      failedAuthenticationLog(log, deps.connection.metrics),
    );
    const superUsers = superUsersOf(config);
    const acls = new AclAuthority({ superUsers, allowEveryoneIfNoAclFound: config.allowEveryoneIfNoAclFound === true }, () => deps.view.image);
    const replication = interBrokerListener(config);
    if (config.controllerVoters.length > 0 && !usesSasl(replication.protocol) && config.allowEveryoneIfNoAclFound !== true && !superUsers.has(ANONYMOUS_PRINCIPAL)) {
      log.warn(
        { listener: replication.name },
        'replica fetchers reach other brokers on a PLAINTEXT inter-broker listener as User:ANONYMOUS, which needs CLUSTER_ACTION on the cluster: '
        + 'add --super-users User:ANONYMOUS, or `sluice acl add --allow-principal User:ANONYMOUS --operation cluster-action --cluster`, or use a SASL_PLAINTEXT inter-broker listener',
      );
    }
    const kept = deps.placement === null ? [] : secured.filter((l) => usesTls(l.protocol) || usesSasl(l.protocol)).map((l) => l.name);
    if (kept.length > 0) log.info({ listeners: kept }, 'connection placement: TLS and SASL listeners keep their connections on main');
    const saslHandlers = authenticator === null ? [] : [
      bindHandler(saslHandshakeHandler, { authenticator }), bindHandler(saslAuthenticateHandler, { authenticator }),
    ];
    this.servers = secured.map((listener, i) => {
      const sasl = usesSasl(listener.protocol);
      const tls = usesTls(listener.protocol) ? this.tls : null;
      const view = deps.view.forListener(listener.name);
      const handlers = buildHandlers({ ...deps.services, cluster: view }, sasl ? saslHandlers : []);
      const admission: ListenerAdmission = {
        quotas: new ConnectionQuotas({
          maxPerIp: config.maxConnectionsPerIp,
          overrides: config.maxConnectionsPerIpOverrides,
          creationRate: config.maxConnectionCreationRate,
          ipRate: (ip) => resolveConnectionRate(deps.view.image.quotas, ip),
          maxThrottleMs: MAX_CONNECTION_THROTTLE_MS,
          // Every IP with an open connection is tracked, so the table holds at least the connection cap.
          maxTrackedIps: config.maxConnections,
        }),
        isBroker: (id, epoch) => deps.view.replicaBrokers().some((b) => b.id === id && b.epoch === epoch),
        now: () => performance.now(),
        metrics: deps.connection.metrics,
      };
      const port = ports[i]!;
      const server = new KafkaServer(
        { ...deps.connection, handlers, acls },
        { ...config, host: listener.host, port, maxInflight: config.maxInflightRequestsPerConnection },
        log, deps.descriptors, deps.native, admission,
        { name: listener.name, tls, sasl: sasl ? authenticator : null },
        tls === null && !sasl ? deps.placement : null,
      );
      return { listener, server, port };
    });
  }

  get connectionCount(): number {
    let n = 0;
    for (const s of this.servers) n += s.server.connectionCount;
    return n;
  }

  /** Opens every listener; the bound ports in order. */
  async listen(): Promise<number[]> {
    const ports: number[] = [];
    for (const s of this.servers) ports.push(await s.server.listen());
    return ports;
  }

  /** Reads TLS certificates and PLAIN users again (SIGHUP); what fails to load is kept as it was, and said. */
  reload(log: Logger): void {
    for (const s of this.servers) s.server.reloadTls();
    if (this.plainUsers === null) return;
    try {
      this.plainUsers.reload();
      log.info({ users: this.plainUsers.size }, 'PLAIN users reloaded');
    } catch (err) {
      log.error({ err }, 'PLAIN users file reload failed; the previous users stay in force');
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.server.close()));
  }
}
