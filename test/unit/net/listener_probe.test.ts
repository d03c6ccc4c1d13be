// connectionRefused: true only when nothing listens at the address.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { connectionRefused } from '../../../src/net/listener_probe.js';

test('a listening port is not refused; the same port once closed is', async () => {
  const server = createServer((s) => s.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  assert.equal(await connectionRefused('127.0.0.1', port, 2_000), false);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  assert.equal(await connectionRefused('127.0.0.1', port, 2_000), true);
});
