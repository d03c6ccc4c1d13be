// SaslHandshake and SaslAuthenticate on a SASL listener (main thread): both act on the
// connection's SaslSession (HandlerContext.sasl). A refused handshake or token is answered with
// its error code (a token's after the listener's failure delay) and the connection then closes
// (the connection sees the session failed). Raw tokens after a v0 handshake never reach these
// handlers: the connection hands them to the same SaslAuthenticator.
import { SaslFailure } from '../../common/sasl_mechanisms.js';
import {
  SaslAuthenticateApi, SaslHandshakeApi,
  type SaslAuthenticateRequest, type SaslAuthenticateResponse, type SaslHandshakeRequest, type SaslHandshakeResponse,
} from '../../protocol/apis/sasl.js';
import { ErrorCode } from '../../protocol/errors.js';
import { handler, type HandlerContext, type Wire } from '../handler.js';
import type { SaslAuthenticator, SaslSession } from '../sasl_session.js';

export interface SaslDeps {
  readonly authenticator: SaslAuthenticator;
}

function sessionOf(ctx: HandlerContext): SaslSession {
  // Bound only on SASL listeners, whose connections all carry a session.
  if (ctx.sasl == null) throw new Error('a SASL API reached a connection without a SASL session');
  return ctx.sasl;
}

export const saslHandshakeHandler = handler({
  api: SaslHandshakeApi,
  handle(ctx, req: SaslHandshakeRequest, deps: SaslDeps): Wire<SaslHandshakeResponse> {
    const session = sessionOf(ctx);
    const errorCode = session.handshake(req.mechanism, ctx.version);
    if (errorCode !== ErrorCode.NONE) deps.authenticator.refusedHandshake(session, req.mechanism, errorCode, ctx.clientHost);
    return { errorCode, mechanisms: [...session.enabledMechanisms] };
  },
});

const refusal = (f: SaslFailure): Wire<SaslAuthenticateResponse> => ({ errorCode: f.code, errorMessage: f.message, authBytes: Buffer.alloc(0), sessionLifetimeMs: 0 });

export const saslAuthenticateHandler = handler({
  api: SaslAuthenticateApi,
  handle(ctx, req: SaslAuthenticateRequest, deps: SaslDeps): Wire<SaslAuthenticateResponse> | Promise<Wire<SaslAuthenticateResponse>> {
    const answer = deps.authenticator.answer(sessionOf(ctx), req.authBytes, ctx.clientHost);
    if (answer instanceof Promise) return answer.then(refusal);
    return { errorCode: ErrorCode.NONE, errorMessage: null, authBytes: answer.token, sessionLifetimeMs: answer.lifetimeMs };
  },
});
