// The ceiling of the metadata rows of `npm run bench`: a bare Fastify server answering the same
// routes as Coffre's folder details and subfolder listing with the exact JSON bodies Coffre gave
// for the same URLs, from memory (no database, no auth, no schema): what Fastify alone costs.
import fs from 'node:fs';
import Fastify from 'fastify';

const bodies = new Map(
  Object.entries(JSON.parse(fs.readFileSync(process.env.BARE_JSON_FILE, 'utf8'))).map(([url, text]) => [url, JSON.parse(text)]),
);
const app = Fastify({ logger: false });
const answer = async (request, reply) => {
  const body = bodies.get(request.url);
  if (!body) return reply.code(404).send({ error: 'unknown url' });
  return body;
};
app.get('/api/folders/details/:folderId', answer);
app.get('/api/folders/:folderId/subfolders', answer);
app.get('/ping', async () => 'ok');
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
