import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import type { Config } from '../../config.js';
import { principalOf } from '../../http/auth.js';
import { CONTENT_SECURITY_HEADERS, attachmentDisposition } from '../../http/content.js';
import { EmptyObject, Envelope, envelope, errorResponses } from '../../http/envelope.js';
import type { Metrics } from '../../http/metrics.js';
import { publicBaseUrl } from '../../http/public-url.js';
import { ZIP_NOTE, ZIP_RESPONSE } from '../archives/archives.routes.js';
import { downloadHeaders, sendDownload } from '../files/files.routes.js';
import { FileIdParams, FolderIdParams } from '../files/files.schemas.js';
import * as S from './links.schemas.js';
import type { LinkTransfer, Pass } from './links.passes.js';
import { linkService, type LinkKind, type SealedDownload, type Visitor } from './links.service.js';

const binary = { description: 'The file content', content: { 'application/octet-stream': { schema: Type.String({ format: 'binary' }) } } };
const publicRoute = { public: true };

function visitor(
  request: FastifyRequest,
  body: { password?: string; encryptionKey?: string; keyProof?: string; hashName?: string },
): Visitor {
  const pass = request.headers['x-coffre-pass'];
  return {
    password: body.password,
    encryptionKey: body.encryptionKey,
    keyProof: body.keyProof,
    hashName: body.hashName,
    pass: typeof pass === 'string' && pass !== '' ? pass : undefined,
    address: request.ip,
    principal: request.principal,
  };
}

/**
 * The transfer of a counted download: its access is spent when the response's last byte went
 * out with a 200 or 206 ('finish'), given back when the client broke off first ('close' alone).
 */
function watchTransfer(links: ReturnType<typeof linkService>, request: FastifyRequest, reply: FastifyReply) {
  const transfer = links.transfer((error) => request.log.error({ err: error }, 'could not settle a link pass'));
  reply.raw.once('finish', () => transfer.end(reply.raw.statusCode === 200 || reply.raw.statusCode === 206));
  reply.raw.once('close', () => transfer.end(false));
  return transfer;
}

/** Tells the client the pass it sends back as `x-coffre-pass`, and until when it lasts. */
function sendPass(reply: FastifyReply, pass: Pass): void {
  reply.headers({ 'x-coffre-pass': pass.token, 'x-coffre-pass-expires': pass.expiresAt });
}

/**
 * Runs a counted download of the request's visitor and tells the client the pass that resumes it
 * without spending another access.
 */
async function counted<T>(
  links: Links,
  request: FastifyRequest,
  reply: FastifyReply,
  body: Parameters<typeof visitor>[1],
  run: (who: Visitor, transfer: LinkTransfer) => Promise<T>,
): Promise<T> {
  const transfer = watchTransfer(links, request, reply);
  const result = await run(visitor(request, body), transfer);
  const pass = transfer.held;
  if (pass) sendPass(reply, pass);
  return result;
}

const PASS_NOTE =
  ' A file link counts one access per download that delivers its last byte: one broken off first gives its access back. Each counted response carries `X-Coffre-Pass` (and `X-Coffre-Pass-Expires`); sent back as the `x-coffre-pass` header, it resumes the same version (with `Range`) for 15 minutes after the transfer ended without spending another access. It replaces neither the key nor the password.';

type App = Parameters<FastifyPluginAsyncTypebox>[0];
type Links = ReturnType<typeof linkService>;

/** Share links: the owner's routes under /files and /folders, and the four public routes (docs/api.md). */
export function linkRoutes(ctx: AppContext, metrics: Metrics): FastifyPluginAsyncTypebox {
  const links = linkService(ctx);
  return async (app) => {
    manageRoutes(app, links, 'file', ctx.config);
    manageRoutes(app, links, 'folder', ctx.config);
    addressRoute(app, links, 'file', ctx.config);
    addressRoute(app, links, 'folder', ctx.config);
    publicViewRoutes(app, links);
    publicDownloadRoutes(app, links, metrics);
    zipRoute(app, links, metrics);
  };
}

/** Create, list, change and revoke the links of a file or a folder. */
function manageRoutes(app: App, links: Links, kind: LinkKind, config: Config): void {
  const base = kind === 'file' ? '/files' : '/folders';
  const tags = [kind === 'file' ? 'File links' : 'Folder links'];
  const Params = kind === 'file' ? FileIdParams : FolderIdParams;
  const idOf = (params: { fileId?: string; folderId?: string }) => (kind === 'file' ? params.fileId! : params.folderId!);

  app.post(
    `${base}/share/:${kind}Id`,
    {
      schema: {
        tags,
        summary: `Create a share link to a ${kind}`,
        description: `201 with \`shareLink\` = \`<public URL>/s/<sharedHash>#<linkKey>\` (COFFRE_PUBLIC_URL, or the address the request came to). The server keeps the ${kind}'s key wrapped by the link key, and the link key only wrapped by the ${kind}'s key (for \`GET ${base}/share/{sharedHash}/address\`), never in clear.`,
        params: Params,
        body: S.CreateLinkBody,
        response: { 201: Envelope(S.CreatedLink), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      const baseUrl = publicBaseUrl(request, config);
      return envelope(
        await links.create(principalOf(request), kind, idOf(request.params as never), request.body, baseUrl),
        201,
        'Link created',
      );
    },
  );

  app.get(
    `${base}/share/:${kind}Id`,
    {
      schema: {
        tags,
        summary: `The ${kind}'s live share links (without their keys)`,
        params: Params,
        response: { 200: Envelope(Type.Array(S.LinkSummary)), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => envelope(await links.list(principalOf(request), kind, idOf(request.params as never))),
  );

  app.patch(
    `${base}/share/:sharedHash`,
    {
      schema: {
        tags,
        summary: 'Change a link: password, expiry, access limit, downloads',
        description:
          '`password: ""` removes the password; `expirationDays` counts from now (0 = never); `maxAccess` 0 = unlimited. Only the owner (others: 404).',
        params: S.SharedHashParams,
        body: S.PatchLinkBody,
        response: { 200: Envelope(S.LinkSummary), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => envelope(await links.update(principalOf(request), kind, request.params.sharedHash, request.body)),
  );

  app.delete(
    `${base}/revoke/:sharedHash`,
    {
      schema: {
        tags,
        summary: 'Revoke a link: it answers 410 from now on',
        params: S.SharedHashParams,
        response: { 200: EmptyObject, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      await links.revoke(principalOf(request), kind, request.params.sharedHash);
      return {};
    },
  );
}

/** A link's full address again, for its owner to copy (the key kept wrapped by the item's key). */
function addressRoute(app: App, links: Links, kind: LinkKind, config: Config): void {
  const base = kind === 'file' ? '/files' : '/folders';
  const tags = [kind === 'file' ? 'File links' : 'Folder links'];
  app.get(
    `${base}/share/:sharedHash/address`,
    {
      schema: {
        tags,
        summary: "A link's full address again, key included",
        description:
          "For the owner to copy a link again: its key is unwrapped with the item's key. Only the owner (others: 404); 409 `LINK_KEY_NOT_KEPT` for links made before the key was kept.",
        params: S.SharedHashParams,
        response: { 200: Envelope(S.LinkAddress), ...errorResponses(401, 404, 409) },
      },
    },
    async (request) => envelope(await links.address(principalOf(request), kind, request.params.sharedHash, publicBaseUrl(request, config))),
  );
}

/** What a file link shows, and the opening of a folder link. */
function publicViewRoutes(app: App, links: Links): void {
  const tags = ['Public links'];
  app.post(
    '/files/shared/:sharedHash',
    {
      config: publicRoute,
      schema: {
        tags,
        security: [],
        summary: 'What a file link shares (public)',
        description:
          "Name, size and type of the file and the link's limits. Needs the password of a protected link; counts no access. The `x-coffre-pass` of a download of this version gets past an exhausted limit.",
        params: S.SharedHashParams,
        body: S.PublicInfoBody,
        response: { 200: Envelope(S.SharedFileInfo), ...errorResponses(401, 403, 404, 410, 429) },
      },
    },
    async (request) => envelope(await links.fileInfo(request.params.sharedHash, visitor(request, request.body))),
  );

  app.post(
    '/folders/shared/:sharedHash',
    {
      config: publicRoute,
      schema: {
        tags,
        security: [],
        summary: 'Open a folder link (public)',
        description:
          'The folder, a page of the files of its tree (by path, then name) with their `hashName`, and its totals. Counts one access; an `encryptionKey` or `keyProof` sent is checked first (403 when wrong, nothing counted). The answer carries `X-Coffre-Pass` (and `X-Coffre-Pass-Expires`): sent back as the `x-coffre-pass` header, it lists the next pages (`cursor` from `nextCursor`), opens the link again and downloads its files without spending another access, past an exhausted limit, until 15 minutes after its last use. It replaces neither the key nor the password.',
        params: S.SharedHashParams,
        querystring: S.FolderOpenQuery,
        body: S.FolderOpenBody,
        response: { 200: Envelope(S.SharedFolderContent), ...errorResponses(400, 401, 403, 404, 410, 429) },
      },
    },
    async (request, reply) => {
      const { content, pass } = await links.openFolder(request.params.sharedHash, visitor(request, request.body), request.query);
      sendPass(reply, pass);
      return envelope(content);
    },
  );
}

/** The two downloads through a link: decrypted by the server, or sealed for the browser. */
function publicDownloadRoutes(app: App, links: Links, metrics: Metrics): void {
  const tags = ['Public links'];
  app.post(
    '/files/download/public/:sharedHash',
    {
      config: publicRoute,
      schema: {
        tags,
        security: [],
        summary: 'Download through a link (public)',
        description: `Decrypts with the \`encryptionKey\` from the link's fragment (the server cannot otherwise), checked before anything is counted. A folder link takes the \`hashName\` of a file of its tree. Supports \`Range\`.${PASS_NOTE}`,
        params: S.SharedHashParams,
        body: S.PublicDownloadBody,
        response: { 200: binary, 206: binary, ...errorResponses(400, 401, 403, 404, 410, 416, 429) },
      },
    },
    async (request, reply) => {
      const download = await counted(links, request, reply, request.body, (who, transfer) =>
        links.download(request.params.sharedHash, who, downloadHeaders(request.headers), transfer),
      );
      return sendDownload(reply, download, metrics);
    },
  );

  app.post(
    '/files/download/public/:sharedHash/sealed',
    {
      config: publicRoute,
      schema: {
        tags,
        security: [],
        summary: 'Download the encrypted content and its key chain (public)',
        description: `Same checks and access counting as the download, but the body is the stored ciphertext and \`X-Coffre-Key-Chain\` holds the wrapped keys from the link key down to the data key (outermost first; \`X-Coffre-Key-Ids\` gives each wrap's id, its associated data), so a browser decrypts with the fragment key that never leaves it. Links made since key checks need \`keyProof\` (403 when missing or wrong, nothing counted). \`Range\` and \`If-Range\` apply to the stored bytes.${PASS_NOTE}`,
        params: S.SharedHashParams,
        body: S.SealedDownloadBody,
        response: { 200: binary, 206: binary, ...errorResponses(400, 401, 403, 404, 410, 416, 429) },
      },
    },
    async (request, reply) => {
      const sealed = await counted(links, request, reply, request.body, (who, transfer) =>
        links.sealed(request.params.sharedHash, who, downloadHeaders(request.headers), transfer),
      );
      return sendSealed(reply, sealed);
    },
  );
}

/** POST /folders/download/public/:sharedHash/zip: a folder link's tree as one zip. */
function zipRoute(app: App, links: Links, metrics: Metrics): void {
  app.post(
    '/folders/download/public/:sharedHash/zip',
    {
      config: publicRoute,
      schema: {
        tags: ['Public links'],
        summary: 'Download a shared folder as a zip (public)',
        description: `The folder link's live subtree, decrypted with the \`encryptionKey\` from the link's fragment (checked, and throttled like the other public routes, before anything is counted). One archive counts one access of the link, given back when the client breaks off before the last byte; \`X-Coffre-Pass\` resumes the same archive (with \`Range\`) without spending another.${ZIP_NOTE}`,
        security: [],
        params: S.SharedHashParams,
        body: S.FolderZipBody,
        response: { 200: ZIP_RESPONSE, 206: ZIP_RESPONSE, ...errorResponses(400, 401, 403, 404, 410, 416, 429) },
      },
    },
    async (request, reply) => {
      const archive = await counted(links, request, reply, request.body, (who, transfer) =>
        links.folderZip(request.params.sharedHash, who, transfer),
      );
      return sendDownload(reply, archive, metrics);
    },
  );
}

/** The sealed route's answer: the stored bytes (or a range of them) with the key chain in headers. */
function sendSealed(reply: FastifyReply, sealed: SealedDownload) {
  reply.headers({
    ...CONTENT_SECURITY_HEADERS,
    'content-type': 'application/octet-stream',
    'content-length': sealed.length,
    'content-disposition': attachmentDisposition(sealed.name),
    'cache-control': 'no-store',
    'accept-ranges': 'bytes',
    etag: sealed.etag,
    'x-coffre-key-chain': sealed.keyChain.join(','),
    'x-coffre-key-ids': sealed.keyIds.join(','),
  });
  if (sealed.range) reply.code(206).header('content-range', `bytes ${sealed.range.start}-${sealed.range.end}/${sealed.storedSize}`);
  return reply.send(sealed.body as never);
}
