// Runs s3rver in a process of its own for the tests, so that what a test measures of its own
// process (memory, CPU) is the S3 client's and not the server's. Prints the port as one JSON
// line on stdout; stops when its parent closes stdin or exits.
import S3rver from 's3rver';

const directory = process.argv[2];
const server = new S3rver({ port: 0, address: '127.0.0.1', directory, silent: true });
const { port } = await server.run();
process.stdout.write(`${JSON.stringify({ port })}\n`);

async function stop() {
  await server.close().catch(() => {});
  process.exit(0);
}
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
