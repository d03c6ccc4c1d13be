// An alteration a client listener runs on the active controller and answers only once this
// node's own metadata image shows what the controller accepted (so a client told "done" finds it
// applied here: a SCRAM credential it may authenticate with, a quota this broker enforces).
// Shared by the SCRAM credential and client quota handlers. Main thread.
import type { ControllerReply } from '../../cluster/metadata/controller.js';
import type { MetadataImage } from '../../cluster/metadata/image.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';

export type ReplyOf<K extends ControllerReply['kind']> = Extract<ControllerReply, { readonly kind: K }>;

/** Resolves once the local image satisfies `holds` (or rejects after `timeoutMs`). */
export type WhenApplied = (holds: (image: MetadataImage) => boolean, timeoutMs: number) => Promise<void>;

/**
 * Runs `alter` (a request for the controller, answered with a `kind` reply) within `timeoutMs`
 * all told, then waits for `shows` to hold on the local image when `applied` is given and `shows`
 * is not null. Answers the reply, or the KafkaError every entry of the request is refused with.
 */
export async function alterOnController<K extends ControllerReply['kind']>(
  kind: K,
  alter: (timeoutMs: number) => Promise<ControllerReply>,
  applied: WhenApplied | undefined,
  shows: (reply: ReplyOf<K>) => ((image: MetadataImage) => boolean) | null,
  timeoutMs: number,
): Promise<ReplyOf<K> | KafkaError> {
  const deadline = performance.now() + timeoutMs;
  try {
    const reply = await alter(timeoutMs);
    if (reply.kind !== kind) throw new Error(`controller answered ${reply.kind} to an ${kind} request`);
    const mine = reply as ReplyOf<K>;
    if ('errorCode' in mine && mine.errorCode !== ErrorCode.NONE) {
      return new KafkaError(mine.errorCode, 'message' in mine && typeof mine.message === 'string' ? mine.message : '');
    }
    const holds = shows(mine);
    if (applied !== undefined && holds !== null) await applied(holds, Math.max(1, deadline - performance.now()));
    return mine;
  } catch (err) {
    if (err instanceof KafkaError) return err;
    throw err;
  }
}
