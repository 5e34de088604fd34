// The ceiling of bench:files: bare node:http streaming bytes to and from disk, unencrypted,
// with 1 MiB buffers; uploads are fsynced before the answer, like Coffre's.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

const dir = process.env.BARE_DIR;
const server = http.createServer((req, res) => {
  handle(req, res).catch((error) => {
    res.destroy(error);
  });
});

async function handle(req, res) {
  const name = path.basename(req.url.split('/').pop());
  if (req.url === '/ping') return res.end('ok');
  if (req.method === 'PUT') {
    const file = path.join(dir, name);
    await pipeline(req, fs.createWriteStream(file, { highWaterMark: 1024 * 1024 }));
    // fsync through a second descriptor flushes the same inode.
    const handle = await fs.promises.open(file, 'r+');
    await handle.sync();
    await handle.close();
    return res.end('stored');
  }
  const file = path.join(dir, name);
  const { size } = await fs.promises.stat(file);
  res.writeHead(200, { 'content-length': size, 'content-type': 'application/octet-stream' });
  await pipeline(fs.createReadStream(file, { highWaterMark: 1024 * 1024 }), res);
}
server.listen(Number(process.env.PORT), '127.0.0.1');
