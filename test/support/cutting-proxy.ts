import net from 'node:net';

/** A TCP proxy in front of a test server that breaks one response off, as a dropped network does. */
export interface CuttingProxy {
  port: number;
  /** How many responses it broke off (at most one). */
  readonly cuts: number;
  /** The heads of the requests that matched, as they went to the server. */
  readonly matched: string[];
  /**
   * Closes the client's side of the cut connection (after `cutAfter` bytes it only stalls): the
   * test calls it once the page has read what came, which a closed stream would have dropped.
   */
  drop(): void;
  /** Stops listening and destroys every connection it holds. */
  close(): Promise<void>;
}

/**
 * Forwards 127.0.0.1:<port> to `targetPort`. The first request whose head matches `match` has its
 * response cut after `cutAfter` bytes (head included): the server's side is destroyed at once,
 * the client's stalls until `drop`; everything else passes untouched.
 */
export async function cuttingProxy(targetPort: number, match: RegExp, cutAfter: number): Promise<CuttingProxy> {
  const sockets = new Set<net.Socket>();
  let armed = true;
  let cuts = 0;
  let stalledClient: net.Socket | null = null;
  const matched: string[] = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    // The server gone: the client gets what was sent, then the end (unless this is the stalled cut);
    // the client gone: the server is cut too.
    upstream.on('close', () => client !== stalledClient && client.end());
    client.on('close', () => upstream.destroy());
    let watching = false;
    let head = '';
    let sent = 0;
    client.on('data', (data: Buffer) => {
      const text = data.toString('latin1');
      if (match.test(text)) matched.push(text.slice(0, Math.max(0, text.indexOf('\r\n\r\n'))));
      if (armed && !watching) {
        head = (head + text).slice(-4096);
        watching = match.test(head);
      }
      upstream.write(data);
    });
    upstream.on('data', (data: Buffer) => {
      if (watching && armed && sent + data.length >= cutAfter) {
        armed = false;
        cuts++;
        stalledClient = client;
        client.write(data.subarray(0, cutAfter - sent));
        upstream.destroy();
        return;
      }
      if (watching) sent += data.length;
      client.write(data);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    get cuts() {
      return cuts;
    },
    matched,
    drop: () => stalledClient?.end(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
