// Per-partition log settings (the topic-level configs that shape storage) and their bounds.
// Plain data; checked once when a log opens or its config changes.

export interface LogConfig {
  segmentBytes: number;
  segmentMs: number;
  retentionMs: number;
  retentionBytes: number;
  maxMessageBytes: number;
  indexIntervalBytes: number;
  timestampType: 'CreateTime' | 'LogAppendTime';
  producerIdExpirationMs: number;
}

/** Index entries store file positions as u32 and Kafka's segment.bytes is an int32. */
export const MAX_SEGMENT_BYTES = 0x7fffffff;
/** Kafka's lower bound for segment.bytes; batches larger than the segment are refused on append. */
export const MIN_SEGMENT_BYTES = 14;

/** Why the config cannot drive a log, or null when it can. */
export function logConfigProblem(c: LogConfig): string | null {
  const int = (v: number, min: number, max = Number.MAX_SAFE_INTEGER): boolean => Number.isInteger(v) && v >= min && v <= max;
  if (!int(c.segmentBytes, MIN_SEGMENT_BYTES, MAX_SEGMENT_BYTES)) return `segmentBytes ${c.segmentBytes} outside [${MIN_SEGMENT_BYTES}, ${MAX_SEGMENT_BYTES}]`;
  if (!int(c.segmentMs, 1)) return `segmentMs ${c.segmentMs} must be a positive integer`;
  if (!int(c.retentionMs, -1)) return `retentionMs ${c.retentionMs} must be -1 or >= 0`;
  if (!int(c.retentionBytes, -1)) return `retentionBytes ${c.retentionBytes} must be -1 or >= 0`;
  if (!int(c.maxMessageBytes, 1)) return `maxMessageBytes ${c.maxMessageBytes} must be positive`;
  if (!int(c.indexIntervalBytes, 0)) return `indexIntervalBytes ${c.indexIntervalBytes} must be >= 0`;
  if (c.timestampType !== 'CreateTime' && c.timestampType !== 'LogAppendTime') return `unknown timestampType ${String(c.timestampType)}`;
  if (!int(c.producerIdExpirationMs, 1)) return `producerIdExpirationMs ${c.producerIdExpirationMs} must be positive`;
  return null;
}

export function assertLogConfig(c: LogConfig): void {
  const problem = logConfigProblem(c);
  if (problem) throw new RangeError(`invalid log config: ${problem}`);
}
