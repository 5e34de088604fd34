// Response batching (src/http/response-batching.ts): responses finished in one turn of the event
// loop are written together at its end, after every request that turn read has been handled;
// streamed bodies are not held back.
import { once } from 'node:events';
import net from 'node:net';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { TurnBatch, installResponseBatching } from '../src/http/response-batching.js';

describe('TurnBatch', () => {
  it('runs what one turn deferred after that turn (microtasks included), in order, and what a flush defers in a later one', async () => {
    const batch = new TurnBatch();
    const events: string[] = [];
    await new Promise<void>((resolve) => {
      setTimeout(() => {
        batch.defer(() => {
          events.push('a');
          batch.defer(() => {
            events.push('c');
            resolve();
          });
        });
        batch.defer(() => events.push('b'));
        queueMicrotask(() => events.push('microtask'));
        events.push('sync');
      }, 1);
    });
    assert.deepEqual(events, ['sync', 'microtask', 'a', 'b', 'c']);
  });
});

describe('response batching', () => {
  it('writes the responses of requests read in the same turn only after all of them were handled', async (t) => {
    const app = Fastify();
    installResponseBatching(app);
    const events: string[] = [];
    app.get('/item/:id', async (request, reply) => {
      const { id } = request.params as { id: string };
      events.push(`handled ${id}`);
      const end = reply.raw.end.bind(reply.raw) as (...args: unknown[]) => unknown;
      reply.raw.end = ((...args: unknown[]) => {
        events.push(`written ${id}`);
        return end(...args);
      }) as typeof reply.raw.end;
      return { id };
    });
    app.get('/stream', async (_request, reply) => {
      events.push('stream handled');
      return reply.type('text/plain').send(Readable.from(['streamed']));
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    t.after(() => app.close());
    const { port } = app.server.address() as net.AddressInfo;

    const accepted = once(app.server, 'connection');
    const sockets = [net.connect(port, '127.0.0.1'), net.connect(port, '127.0.0.1')];
    t.after(() => sockets.forEach((s) => s.destroy()));
    await Promise.all(sockets.map((s) => once(s, 'connect')));
    await accepted;
    await new Promise((resolve) => setTimeout(resolve, 20)); // both accepted before the requests come
    const answers = sockets.map((s) => {
      let text = '';
      s.on('data', (chunk) => (text += chunk));
      return () => text;
    });
    // Written in one synchronous block: both requests sit in the server's sockets before it next polls.
    sockets[0].write('GET /item/one HTTP/1.1\r\nHost: x\r\n\r\n');
    sockets[1].write('GET /item/two HTTP/1.1\r\nHost: x\r\n\r\n');
    while (!answers.every((read) => read().includes('}'))) await new Promise((resolve) => setTimeout(resolve, 5));

    assert.deepEqual(events, ['handled one', 'handled two', 'written one', 'written two']);
    assert.match(answers[0](), /^HTTP\/1.1 200[\s\S]*\{"id":"one"\}$/);
    assert.match(answers[1](), /^HTTP\/1.1 200[\s\S]*\{"id":"two"\}$/);

    const streamed = await app.inject({ method: 'GET', url: '/stream' });
    assert.equal(streamed.body, 'streamed');
  });
});
