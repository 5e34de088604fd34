// An s3rver process for bench:scale: S3 protocol on 127.0.0.1:$PORT, objects under $S3_DIR,
// bucket $S3_BUCKET created at start. Prints "ready" once it listens.
import S3rver from 's3rver';

const server = new S3rver({
  port: Number(process.env.PORT),
  address: '127.0.0.1',
  directory: process.env.S3_DIR,
  silent: true,
  configureBuckets: [{ name: process.env.S3_BUCKET }],
});
await server.run();
process.stdout.write('ready\n');
process.on('SIGTERM', () => server.close().then(() => process.exit(0)));
