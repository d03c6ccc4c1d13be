// Whether anything listens at a TCP address (main thread): one connect attempt, closed at once.
// The controller asks it of a broker whose controller connection closed: a refusal means the
// broker's process is gone, and its session can end without the disconnect grace. Only a refusal
// counts; a timeout or any other error says nothing (a host that is down, or a slow one).
import { connect } from 'node:net';

/** Resolves true only when the connection is refused (ECONNREFUSED) within `timeoutMs`. */
export function connectionRefused(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (refused: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(refused);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(false));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code === 'ECONNREFUSED'));
  });
}
