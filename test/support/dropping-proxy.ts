import net from 'node:net';

/** A TCP proxy in front of a test server whose network drops once, in the middle of a request body, until restored. */
export interface DroppingProxy {
  port: number;
  /** How many times the network dropped (at most once). */
  readonly drops: number;
  /** Connections refused while the network was down. */
  readonly refused: number;
  /** The request lines and headers that went through, in order (those refused while down excluded). */
  readonly heads: string[];
  /** The head of the request the drop cut in the middle of its body, null before the drop. */
  readonly cut: string | null;
  /** The network comes back: connections go through again. */
  restore(): void;
  /** Stops listening and destroys every connection it holds. */
  close(): Promise<void>;
}

// The start of an HTTP/1.1 request: a request body chunk (random bytes in the tests) never looks like it.
const REQUEST_LINE = /^[A-Z]+ \S+ HTTP\/1\.1\r\n/;

/**
 * Forwards 127.0.0.1:<port> to `targetPort`. Once `dropAfter` bytes of the requests whose head
 * matches `match` went to the server (heads and bodies, all such requests together), the network
 * drops: every connection is destroyed at once, in the middle of the request being sent, and each
 * new one is refused (closed as soon as it opens) until `restore`.
 */
export async function droppingProxy(targetPort: number, match: RegExp, dropAfter: number): Promise<DroppingProxy> {
  const sockets = new Set<net.Socket>();
  let down = false;
  let drops = 0;
  let refused = 0;
  let cut: string | null = null;
  let counted = 0;
  const heads: string[] = [];
  const server = net.createServer((client) => {
    if (down) {
      refused++;
      client.on('error', () => {});
      client.destroy();
      return;
    }
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('data', (data: Buffer) => client.write(data));
    let counting = false;
    let head = '';
    client.on('data', (data: Buffer) => {
      if (down) return;
      const text = data.toString('latin1', 0, Math.min(data.length, 8192));
      if (REQUEST_LINE.test(text)) {
        head = text.slice(0, Math.max(0, text.indexOf('\r\n\r\n')));
        heads.push(head);
        counting = match.test(text);
      }
      if (counting && drops === 0 && counted + data.length >= dropAfter) {
        down = true;
        drops++;
        cut = head;
        // What came before the drop point reaches the server, then every connection goes.
        upstream.write(data.subarray(0, dropAfter - counted), () => {
          for (const s of sockets) s.destroy();
        });
        return;
      }
      if (counting) counted += data.length;
      upstream.write(data);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    get drops() {
      return drops;
    },
    get refused() {
      return refused;
    },
    get cut() {
      return cut;
    },
    heads,
    restore: () => {
      down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
