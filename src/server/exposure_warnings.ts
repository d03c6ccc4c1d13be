// Which of this broker's listeners are open to a network without authentication (pure, main
// thread at start): a Kafka listener on a non-loopback address that is PLAINTEXT, or SSL without
// a required client certificate, and the admin HTTP on a non-loopback address without a token.
// The broker logs each warning once at start and reports them in /v1/health's details; nothing
// is refused, since an internal network may be trusted on purpose.
import { isIPv4, isIPv6 } from 'node:net';
import type { BrokerConfig } from '../config.js';

/** Whether `host` can only be reached from this machine: 127.0.0.0/8, ::1 (also IPv4-mapped) or localhost. An empty host binds every address. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost') return true;
  if (isIPv4(h)) return h.startsWith('127.');
  if (isIPv6(h)) return h === '::1' || h.startsWith('::ffff:127.');
  return false;
}

export type ExposureSettings = Pick<BrokerConfig, 'clientListeners' | 'sslClientAuth' | 'adminHost' | 'adminTokenFile'>;

/** One sentence per exposed listener, naming it and the fix; empty when nothing is exposed. */
export function exposureWarnings(c: ExposureSettings): string[] {
  const warnings: string[] = [];
  for (const l of c.clientListeners) {
    if (isLoopbackHost(l.host)) continue;
    const at = `listener ${l.name} (${l.protocol}) on ${l.host === '' ? '*' : l.host}:${l.port}`;
    if (l.protocol === 'PLAINTEXT') {
      warnings.push(`${at} accepts unauthenticated clients from the network: use SASL_SSL (or SSL with --ssl-client-auth required), or bind it to 127.0.0.1`);
    } else if (l.protocol === 'SSL' && c.sslClientAuth !== 'required') {
      warnings.push(`${at} encrypts but does not authenticate clients: set --ssl-client-auth required or use SASL_SSL`);
    }
  }
  if (!isLoopbackHost(c.adminHost) && c.adminTokenFile === '') {
    warnings.push(`admin HTTP on ${c.adminHost === '' ? '*' : c.adminHost} answers anyone from the network: set --admin-token-file (and --admin-ssl-cert-file/--admin-ssl-key-file), or bind --admin-addr to 127.0.0.1`);
  }
  return warnings;
}
