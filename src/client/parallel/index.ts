// Public surface of the parallel consumer: the ParallelConsumer itself, and its pure parts
// (watermark tracking, commit metadata codec, in-flight window rule, key-ordered routing,
// backpressure and fetch sizing).
// Runs on whichever thread imports it; it only re-exports.

export { WatermarkTracker } from './watermark.js';
export { CompletedOffsets, bitmapEncodedLength, decodeOffsetMetadata, encodeOffsetMetadata } from './offset_codec.js';
export { maxWindowSpan, mayStart } from './window.js';
export { KeyRouter, Ordering } from './key_router.js';
export type { HotKey, KeyRouterOptions, RoutedMessage } from './key_router.js';
export { BackpressureController } from './backpressure.js';
export type { BackpressureLimits } from './backpressure.js';
export { AdaptiveFetchSizer } from './adaptive_batch.js';
export type { AdaptiveFetchOptions, FetchSize } from './adaptive_batch.js';
export { ParallelConsumer } from './parallel_consumer.js';
export type { CommittedStat, HotKeyStat, ParallelConsumerOptions, ParallelConsumerStats } from './parallel_consumer.js';
export type { ConsumerFactory, ConsumerPort, DeadLetterHeader, DeadLetterSink, MessageHandler } from './ports.js';
export { DeadLetterHeaders, Outcome } from './retry.js';
export type { DeadLetterOptions, RetryPolicy } from './retry.js';
export type { PiscinaHandlerOptions, PiscinaMessage } from './piscina_pool.js';
