// SCRAM credentials written offline, before a broker runs (`sluice user create NAME --data-dir
// DIR`, as Kafka's storage tool's --add-scram writes them into its bootstrap checkpoint):
// `<data-dir>/meta/scram-bootstrap.json`, owner-only, holding each credential as the metadata
// keeps it (salt, StoredKey, ServerKey, iterations; never the password or the salted password).
// At start a node whose controller is the active one carries the file into the metadata log
// (users that already have a credential for the mechanism keep theirs) and removes it; a cluster
// node that is not the active controller once the quorum has a leader drops it (the active
// controller's own copy is the one carried, so create the credential on every voter's data dir).
// Main thread at start-up, and the CLI process.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { isScramMechanism, type ScramCredential } from '../common/sasl_mechanisms.js';
import { MAX_SCRAM_BYTES, MAX_SCRAM_NAME_CHARS } from '../cluster/metadata/records.js';

const FILE = 'scram-bootstrap.json';
/** Bound on the credentials one bootstrap file carries. */
const MAX_BOOTSTRAP_CREDENTIALS = 10_000;

export type BootstrapCredential = ScramCredential & { readonly user: string };

interface StoredCredential {
  user: string;
  mechanism: string;
  salt: string;
  storedKey: string;
  serverKey: string;
  iterations: number;
}

const pathOf = (dataDir: string): string => join(dataDir, 'meta', FILE);

function decode(entry: unknown, file: string): BootstrapCredential {
  const e = entry as Partial<StoredCredential> | null;
  const bytes = (v: unknown): Buffer | null => {
    if (typeof v !== 'string') return null;
    const b = Buffer.from(v, 'base64');
    return b.length > 0 && b.length <= MAX_SCRAM_BYTES ? b : null;
  };
  const salt = bytes(e?.salt);
  const storedKey = bytes(e?.storedKey);
  const serverKey = bytes(e?.serverKey);
  if (e === null || typeof e.user !== 'string' || e.user === '' || e.user.length > MAX_SCRAM_NAME_CHARS || typeof e.mechanism !== 'string' || !isScramMechanism(e.mechanism)
    || salt === null || storedKey === null || serverKey === null || typeof e.iterations !== 'number' || !Number.isInteger(e.iterations)) {
    throw new Error(`${file}: an entry is not {user, mechanism, salt, storedKey, serverKey, iterations}`);
  }
  return { user: e.user, mechanism: e.mechanism, salt, storedKey, serverKey, iterations: e.iterations };
}

/** The credentials waiting in `dataDir` to be carried into the metadata log; empty when there is no file. */
export function readScramBootstrap(dataDir: string): BootstrapCredential[] {
  const file = pathOf(dataDir);
  if (!existsSync(file)) return [];
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown; credentials?: unknown };
  if (parsed === null || parsed.version !== 1 || !Array.isArray(parsed.credentials) || parsed.credentials.length > MAX_BOOTSTRAP_CREDENTIALS) {
    throw new Error(`${file}: not a version 1 list of at most ${MAX_BOOTSTRAP_CREDENTIALS} credentials`);
  }
  return parsed.credentials.map((c) => decode(c, file));
}

/** Adds (or replaces) `credential` in `dataDir`'s bootstrap file, written owner-only and renamed into place. */
export function writeScramBootstrap(dataDir: string, credential: BootstrapCredential): void {
  const kept = readScramBootstrap(dataDir).filter((c) => !(c.user === credential.user && c.mechanism === credential.mechanism));
  const all = [...kept, credential];
  if (all.length > MAX_BOOTSTRAP_CREDENTIALS) throw new Error(`at most ${MAX_BOOTSTRAP_CREDENTIALS} credentials wait in a bootstrap file`);
  const stored: StoredCredential[] = all.map((c) => ({
    user: c.user, mechanism: c.mechanism, salt: c.salt.toString('base64'), storedKey: c.storedKey.toString('base64'),
    serverKey: c.serverKey.toString('base64'), iterations: c.iterations,
  }));
  const file = pathOf(dataDir);
  mkdirSync(join(dataDir, 'meta'), { recursive: true });
  writeFileSync(`${file}.tmp`, `${JSON.stringify({ version: 1, credentials: stored }, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

/** Carries the bootstrap file through `bootstrap` (the local quorum, once active), then removes it; `active` says whether to carry or drop. */
export async function carryScramBootstrap(
  dataDir: string,
  active: () => Promise<boolean>,
  bootstrap: (credentials: readonly BootstrapCredential[]) => Promise<{ errorCode: number; message: string | null }>,
  log: Logger,
): Promise<void> {
  const credentials = readScramBootstrap(dataDir);
  if (credentials.length === 0) return;
  if (!(await active())) {
    rmSync(pathOf(dataDir));
    log.info({ credentials: credentials.length }, 'SCRAM bootstrap file dropped: another node is the active controller and carries its own');
    return;
  }
  const reply = await bootstrap(credentials);
  if (reply.errorCode !== 0) throw new Error(`SCRAM bootstrap credentials not carried into the metadata log: error ${reply.errorCode}: ${reply.message ?? ''}`);
  rmSync(pathOf(dataDir));
  log.info({ credentials: credentials.length }, 'carried SCRAM credentials written offline into the metadata log');
}
