// Public surface of our Kafka producer: what a package user imports. Any thread.
export { Producer } from './producer.js';
export type { Acks, Bytes, Compression, ProducerMessage, ProducerOptions } from './producer_options.js';
export type { RecordMetadata } from './delivery.js';
export { BufferFullError } from './accumulator.js';
export { partitionForKey } from './murmur2.js';
