// What the single executable (`npm run build:binary`, a Node single-executable application)
// carries besides its main script: the shard worker bundle, native addons and the build's facts
// (build.json). Usable on any thread; outside the executable the lookups answer null (or false)
// and callers use the files of the source tree instead.
// Invariants: a native addon is loaded only from a cache copy whose SHA-256 matches the one the
// build recorded (asset_cache.ts); build.json is read once per thread.
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { cacheDirCandidates, cachedFilePath, sha256Hex } from './asset_cache.js';

/** build.json, written by scripts/build_binary.mjs. */
export interface EmbeddedBuild {
  readonly version: string;
  readonly commit: string;
  /** Asset key → SHA-256 (hex) of every native addon embedded, e.g. 'sluice_native.node'. */
  readonly natives: Readonly<Record<string, string>>;
}

type SeaModule = typeof import('node:sea');

const requireHere = createRequire(import.meta.url);

/** node:sea when this process is the single executable (node:sea exists from Node 20.12). */
function seaModule(): SeaModule | null {
  try {
    const sea = requireHere('node:sea') as SeaModule;
    return sea.isSea() ? sea : null;
  } catch {
    return null;
  }
}

const sea = seaModule();

/** True when this process runs from the single executable. */
export function runsEmbedded(): boolean {
  return sea !== null;
}

/**
 * The arguments after process.execPath that run the sluice CLI again (a broker child of `dev
 * cluster` or `bench`): none inside the executable, else node with the compiled main.js.
 */
export const CLI_ARGV: readonly string[] = sea !== null ? [] : [fileURLToPath(new URL('../cli/main.js', import.meta.url))];

/** An embedded text asset (e.g. the shard worker bundle), or null outside the executable. */
export function embeddedText(key: string): string | null {
  return sea === null ? null : sea.getAsset(key, 'utf8');
}

let build: EmbeddedBuild | null | undefined;

export function embeddedBuild(): EmbeddedBuild | null {
  if (build === undefined) {
    const text = embeddedText('build.json');
    build = text === null ? null : (JSON.parse(text) as EmbeddedBuild);
  }
  return build;
}

/**
 * The versioned cache directory's name: the version and a digest over every addon's name and
 * SHA-256, so a build whose addons differ in any byte gets its own directory and builds never
 * fight over one file.
 */
export function versionDir(info: EmbeddedBuild): string {
  const listing = Object.keys(info.natives)
    .sort()
    .map((key) => `${key}=${info.natives[key] ?? ''}\n`)
    .join('');
  return `${info.version}-${sha256Hex(new TextEncoder().encode(listing)).slice(0, 16)}`;
}

/**
 * The path of a verified cache copy of embedded native addon `key`, extracted on first use; null
 * outside the executable. Throws when the build has no such addon or no cache directory works.
 */
export function embeddedNativePath(key: string): string | null {
  const info = embeddedBuild();
  if (sea === null || info === null) return null;
  const sha256 = info.natives[key];
  if (sha256 === undefined) throw new Error(`the executable carries no native addon ${key}`);
  const file = { name: key, bytes: new Uint8Array(sea.getAsset(key)), sha256 };
  const uid = typeof process.getuid === 'function' ? process.getuid() : -1;
  return cachedFilePath(file, cacheDirCandidates(versionDir(info), process.env, homeDirectory(), tmpdir(), uid), uid);
}

/** The user's home, or '' when there is none ($HOME unset and no passwd entry): os.homedir throws then. */
function homeDirectory(): string {
  try {
    return homedir();
  } catch {
    return '';
  }
}

/** Loads embedded native addon `key` (extracting it first); only valid inside the executable. */
export function loadEmbeddedNative(key: string): unknown {
  const path = embeddedNativePath(key);
  if (path === null) throw new Error(`native addon ${key} is embedded only in the single executable`);
  return requireHere(path);
}
