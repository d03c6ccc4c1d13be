// The control plane between the main thread and a shard: comlink over the worker's message
// port. Only low-rate operations travel here (open/close partitions, list offsets,
// introspection, shutdown); the data plane uses the rings. comlink speaks the DOM
// MessagePort shape (addEventListener, event.data); worker_threads ports emit plain values
// through on/off, so this adapter wraps each message as { data }.
import * as Comlink from 'comlink';
import type { MessagePort, Worker } from 'node:worker_threads';

export type Remote<T> = Comlink.Remote<T>;

type Port = Worker | MessagePort;
type Listener = Parameters<Comlink.Endpoint['addEventListener']>[1];

function endpoint(port: Port): Comlink.Endpoint {
  const wrapped = new Map<Listener, (data: unknown) => void>();
  return {
    postMessage: (message: unknown, transfer?: unknown[]) => port.postMessage(message, transfer as never),
    addEventListener: (_type: string, listener: Listener) => {
      const fn = (data: unknown): void => {
        const event = { data } as MessageEvent;
        if (typeof listener === 'function') listener(event);
        else listener.handleEvent(event);
      };
      wrapped.set(listener, fn);
      port.on('message', fn);
    },
    removeEventListener: (_type: string, listener: Listener) => {
      const fn = wrapped.get(listener);
      if (!fn) return;
      wrapped.delete(listener);
      port.off('message', fn);
    },
  } as Comlink.Endpoint;
}

export function exposeControl(api: object, port: Port): void {
  Comlink.expose(api, endpoint(port));
}

export function connectControl<T>(port: Port): Remote<T> {
  return Comlink.wrap<T>(endpoint(port));
}
