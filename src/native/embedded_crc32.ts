// Stands in for the @node-rs/crc32 package inside the single executable: the binary build
// (scripts/build_binary.mjs) resolves that package to this module, since a bundle cannot carry
// the package's platform-specific .node file. The same file travels as an embedded asset and is
// loaded from the verified cache copy (embedded.ts). Any thread; loads on first import.
import { loadEmbeddedNative } from './embedded.js';

interface Crc32Binding {
  crc32(input: Uint8Array | string, initialState?: number | null): number;
  crc32c(input: Uint8Array | string, initialState?: number | null): number;
}

const binding = loadEmbeddedNative('crc32.linux-x64-gnu.node') as Crc32Binding;

export const crc32 = binding.crc32;
export const crc32c = binding.crc32c;
