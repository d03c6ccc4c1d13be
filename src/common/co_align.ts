// Padding that lets a bulk copy into or out of a SharedArrayBuffer run at memcpy speed (any thread;
// pure arithmetic). V8 copies bytes that touch shared memory with relaxed atomic accesses: a word
// at a time when source and target share their address modulo 8, else a byte at a time, which
// measured 3.4 against 25 GB/s on this machine for 1 MiB copies (plain to plain: 44). Backing
// stores of ArrayBuffers and SharedArrayBuffers start at least 8-aligned, so a view's byteOffset
// decides its address modulo 8.

/** Most padding coAlignPad returns, plus one: room a writer reserves for it. */
export const CO_ALIGN_BYTES = 8;

/** Bytes to skip at `dstByteOffset` so a copy from `srcByteOffset` lands on the same address modulo 8. */
export function coAlignPad(srcByteOffset: number, dstByteOffset: number): number {
  return (srcByteOffset - dstByteOffset) & (CO_ALIGN_BYTES - 1);
}
