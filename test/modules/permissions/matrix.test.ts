// Which per-user permission each protected file and folder route needs (docs/api.md), as ONE table:
// every route × {owner, no permission, canView, canDownload, canEdit, no token} → status. The
// grants are made on a folder the items sit in (or above), so every allowed cell also exercises
// inheritance. Mutating routes get a fresh fixture per cell, so one cell never sees another's effect.
// Trashed items are their owner's alone (trash.test.ts): only the owner restores.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, build, client, signUp, type ApiResponse, type Client, type TestUser } from '../../helper.js';
import { putFile } from '../../support/files.js';

const ROLES = ['owner', 'none', 'canView', 'canDownload', 'canEdit', 'anon'] as const;
type Role = (typeof ROLES)[number];

/** What a cell's request works on; made by the owner, shared folder S granted to the three grantees. */
interface Fixture {
  bucketId: string;
  /** S: the shared folder. */
  shared: string;
  /** S/Child, which also carries a permission of `other`'s. */
  child: string;
  /** S/Target: where moves and copies go. */
  target: string;
  /** S/Trashed, in the trash. */
  trashedFolder: string;
  /** S/f.txt with two versions (`oldVersion` is not current); `other` holds a permission on it. */
  file: string;
  oldVersion: string;
  /** S/t.txt, in the trash. */
  trashedFile: string;
  /** A user holding permissions on `file` and `child`: the subject of the permission routes. */
  other: string;
}

interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  body?: unknown;
  headers?: Record<string, string>;
}

const BOUNDARY = 'coffre-matrix-boundary';
const MULTIPART = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="up.txt"\r\nContent-Type: text/plain\r\n\r\nuploaded\r\n--${BOUNDARY}--\r\n`;

type Expect = [owner: number, none: number, canView: number, canDownload: number, canEdit: number, anon: number];
interface Row {
  /** The route as registered, e.g. `GET /api/files/details/:fileId`. */
  route: string;
  call: (fx: Fixture) => Call;
  expect: Expect;
  /** Reads only: one fixture serves the whole row. */
  readOnly?: boolean;
}

const api = (path: string) => `/api${path}`;
const OWNER_ONLY = (ok: number): Expect => [ok, 404, 404, 404, 404, 401];
const EDIT = (ok: number): Expect => [ok, 404, 404, 404, ok, 401];

// prettier-ignore
const MATRIX: Row[] = [
  // Folders                                                                                      owner none view dl   edit anon
  { route: 'GET /api/folders/details/:folderId', readOnly: true, call: (fx) => ({ method: 'GET', url: api(`/folders/details/${fx.child}`) }), expect: [200, 401, 200, 200, 200, 401] },
  { route: 'GET /api/folders/:folderId/subfolders', readOnly: true, call: (fx) => ({ method: 'GET', url: api(`/folders/${fx.shared}/subfolders`) }), expect: [200, 403, 200, 200, 200, 401] },
  { route: 'GET /api/folders/:folderId/access', readOnly: true, call: (fx) => ({ method: 'GET', url: api(`/folders/${fx.child}/access`) }), expect: [200, 404, 200, 200, 200, 401] },
  { route: 'GET /api/folders/list/:bucketId', readOnly: true, call: (fx) => ({ method: 'GET', url: api(`/folders/list/${fx.bucketId}`) }), expect: OWNER_ONLY(200) },
  { route: 'POST /api/folders/create/:bucketId', call: (fx) => ({ method: 'POST', url: api(`/folders/create/${fx.bucketId}`), body: { name: 'New', parentId: fx.shared } }), expect: EDIT(201) },
  { route: 'PUT /api/folders/update/:folderId', call: (fx) => ({ method: 'PUT', url: api(`/folders/update/${fx.child}`), body: { name: 'Renamed' } }), expect: EDIT(200) },
  { route: 'PUT /api/folders/update/:folderId', call: (fx) => ({ method: 'PUT', url: api(`/folders/update/${fx.child}`), body: { isShare: false } }), expect: OWNER_ONLY(200) },
  { route: 'PUT /api/folders/update/:folderId', call: (fx) => ({ method: 'PUT', url: api(`/folders/update/${fx.child}`), body: { visibility: 'public' } }), expect: OWNER_ONLY(200) },
  { route: 'DELETE /api/folders/delete/:folderId', call: (fx) => ({ method: 'DELETE', url: api(`/folders/delete/${fx.child}?trash=soft`) }), expect: EDIT(200) },
  { route: 'DELETE /api/folders/delete/:folderId', call: (fx) => ({ method: 'DELETE', url: api(`/folders/delete/${fx.child}?trash=hard`) }), expect: OWNER_ONLY(200) },
  { route: 'POST /api/folders/move/:folderId', call: (fx) => ({ method: 'POST', url: api(`/folders/move/${fx.child}`), body: { targetParentId: fx.target } }), expect: EDIT(200) },
  { route: 'POST /api/folders/copy/:folderId', call: (fx) => ({ method: 'POST', url: api(`/folders/copy/${fx.child}`), body: { targetParentId: fx.target } }), expect: EDIT(201) },
  { route: 'POST /api/folders/restore/:folderId', call: (fx) => ({ method: 'POST', url: api(`/folders/restore/${fx.trashedFolder}`) }), expect: OWNER_ONLY(200) },
  // Files
  { route: 'POST /api/files/upload/:folderId', call: (fx) => ({ method: 'POST', url: api(`/files/upload/${fx.shared}`), body: MULTIPART, headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } }), expect: EDIT(201) },
  { route: 'PUT /api/files/upload/:folderId', call: (fx) => ({ method: 'PUT', url: api(`/files/upload/${fx.shared}?name=raw.txt`), body: 'raw', headers: { 'content-type': 'application/octet-stream' } }), expect: EDIT(201) },
  { route: 'GET /api/files/details/:fileId', readOnly: true, call: (fx) => ({ method: 'GET', url: api(`/files/details/${fx.file}`) }), expect: [200, 404, 200, 200, 200, 401] },
  { route: 'GET /api/files/list/:folderId', readOnly: true, call: (fx) => ({ method: 'GET', url: api(`/files/list/${fx.shared}`) }), expect: [200, 403, 200, 200, 200, 401] },
  { route: 'GET /api/files/versions/:fileId', readOnly: true, call: (fx) => ({ method: 'GET', url: api(`/files/versions/${fx.file}`) }), expect: [200, 404, 200, 200, 200, 401] },
  { route: 'GET /api/files/download/:fileId', readOnly: true, call: (fx) => ({ method: 'GET', url: api(`/files/download/${fx.file}`) }), expect: [200, 404, 404, 200, 200, 401] },
  // f.txt has no thumbnail: everyone who may see it gets 404 THUMBNAIL_NOT_FOUND, the others FILE_NOT_FOUND (test/modules/thumbnails covers an image, viewer included).
  { route: 'GET /api/files/thumbnail/:fileId', readOnly: true, call: (fx) => ({ method: 'GET', url: api(`/files/thumbnail/${fx.file}`) }), expect: [404, 404, 404, 404, 404, 401] },
  { route: 'GET /api/folders/download/:folderId', readOnly: true, call: (fx) => ({ method: 'GET', url: api(`/folders/download/${fx.shared}`) }), expect: [200, 404, 403, 200, 200, 401] },
  { route: 'GET /api/folders/download/:folderId', readOnly: true, call: (fx) => ({ method: 'GET', url: api(`/folders/download/${fx.child}`) }), expect: [200, 404, 403, 200, 200, 401] },
  { route: 'POST /api/files/download-zip', readOnly: true, call: (fx) => ({ method: 'POST', url: api('/files/download-zip'), body: { fileIds: [fx.file] } }), expect: [200, 400, 403, 200, 200, 401] },
  { route: 'GET /api/files/download/:fileId', readOnly: true, call: (fx) => ({ method: 'GET', url: api(`/files/download/${fx.file}?versionId=${fx.oldVersion}`) }), expect: [200, 404, 404, 200, 200, 401] },
  { route: 'GET /api/files/preview/:fileId', readOnly: true, call: (fx) => ({ method: 'GET', url: api(`/files/preview/${fx.file}`) }), expect: [200, 404, 200, 200, 200, 401] },
  { route: 'GET /api/files/preview/:fileId', readOnly: true, call: (fx) => ({ method: 'GET', url: api(`/files/preview/${fx.file}?versionId=${fx.oldVersion}`) }), expect: [200, 404, 200, 200, 200, 401] },
  { route: 'GET /api/files/preview-address/:fileId', readOnly: true, call: (fx) => ({ method: 'GET', url: api(`/files/preview-address/${fx.file}`) }), expect: [200, 404, 200, 200, 200, 401] },
  { route: 'PUT /api/files/update/:fileId', call: (fx) => ({ method: 'PUT', url: api(`/files/update/${fx.file}`), body: { name: 'g.txt', visibility: 'private' } }), expect: EDIT(200) },
  { route: 'PUT /api/files/update/:fileId', call: (fx) => ({ method: 'PUT', url: api(`/files/update/${fx.file}`), body: { name: 'f.txt', visibility: 'public' } }), expect: OWNER_ONLY(200) },
  { route: 'PUT /api/files/update/:fileId', call: (fx) => ({ method: 'PUT', url: api(`/files/update/${fx.file}`), body: { name: 'f.txt', visibility: 'private', retentionPeriod: '30d' } }), expect: OWNER_ONLY(200) },
  { route: 'POST /api/files/move/:fileId', call: (fx) => ({ method: 'POST', url: api(`/files/move/${fx.file}`), body: { targetFolderId: fx.target } }), expect: EDIT(200) },
  { route: 'POST /api/files/copy/:fileId', call: (fx) => ({ method: 'POST', url: api(`/files/copy/${fx.file}`), body: { targetFolderId: fx.target } }), expect: EDIT(201) },
  { route: 'DELETE /api/files/delete/:fileId', call: (fx) => ({ method: 'DELETE', url: api(`/files/delete/${fx.file}?trash=soft`) }), expect: EDIT(200) },
  { route: 'DELETE /api/files/delete/:fileId', call: (fx) => ({ method: 'DELETE', url: api(`/files/delete/${fx.file}?trash=hard`) }), expect: OWNER_ONLY(200) },
  { route: 'POST /api/files/restore/:fileId', call: (fx) => ({ method: 'POST', url: api(`/files/restore/${fx.trashedFile}`) }), expect: OWNER_ONLY(200) },
  { route: 'POST /api/files/versions/:fileId/:versionId/restore', call: (fx) => ({ method: 'POST', url: api(`/files/versions/${fx.file}/${fx.oldVersion}/restore`) }), expect: EDIT(200) },
  { route: 'DELETE /api/files/versions/:fileId/:versionId', call: (fx) => ({ method: 'DELETE', url: api(`/files/versions/${fx.file}/${fx.oldVersion}`) }), expect: OWNER_ONLY(200) },
  // Permissions: managing them is the owner's (`other` already holds one, so the owner updates: 200)
  { route: 'PUT /api/files/shared/:fileId/:userIds', call: (fx) => ({ method: 'PUT', url: api(`/files/shared/${fx.file}/${fx.other}`), body: { canEdit: true } }), expect: OWNER_ONLY(200) },
  { route: 'POST /api/files/share-users/:fileId', call: (fx) => ({ method: 'POST', url: api(`/files/share-users/${fx.file}`), body: { users: [{ userId: fx.other, canEdit: true }] } }), expect: OWNER_ONLY(200) },
  { route: 'GET /api/files/share-users/:fileId', readOnly: true, call: (fx) => ({ method: 'GET', url: api(`/files/share-users/${fx.file}`) }), expect: OWNER_ONLY(200) },
  { route: 'DELETE /api/files/share-users/:fileId/:userId', call: (fx) => ({ method: 'DELETE', url: api(`/files/share-users/${fx.file}/${fx.other}`) }), expect: OWNER_ONLY(200) },
  { route: 'POST /api/folders/share-users/:folderId', call: (fx) => ({ method: 'POST', url: api(`/folders/share-users/${fx.child}`), body: { users: [{ userId: fx.other, canEdit: true }] } }), expect: OWNER_ONLY(200) },
  { route: 'GET /api/folders/share-users/:folderId', readOnly: true, call: (fx) => ({ method: 'GET', url: api(`/folders/share-users/${fx.child}`) }), expect: OWNER_ONLY(200) },
  { route: 'DELETE /api/folders/share-users/:folderId/:userId', call: (fx) => ({ method: 'DELETE', url: api(`/folders/share-users/${fx.child}/${fx.other}`) }), expect: OWNER_ONLY(200) },
  { route: 'GET /api/shared-with-me', readOnly: true, call: () => ({ method: 'GET', url: api('/shared-with-me') }), expect: [200, 200, 200, 200, 200, 401] },
];

/**
 * Routes this table leaves to others: public routes (no principal to check), and the share-link
 * routes of the links work (docs/api.md), which their own tests cover.
 */
const NOT_IN_MATRIX =
  /^(GET \/api\/files\/public\/|[A-Z]+ \/api\/(files|folders)\/(share\/|shared\/:sharedHash|download\/public\/|revoke\/))/;

function send(api: Client, call: Call): Promise<ApiResponse> {
  switch (call.method) {
    case 'GET':
      return api.get(call.url, call.headers);
    case 'POST':
      return api.post(call.url, call.body, call.headers);
    case 'PUT':
      return api.put(call.url, call.body, call.headers);
    case 'DELETE':
      return api.delete(call.url, call.body, call.headers);
  }
}

function fixtureStep(res: ApiResponse, status: number, what: string): ApiResponse {
  assert.equal(res.status, status, `fixture: ${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

for (const dialect of DIALECTS) {
  describe(`permission matrix [${dialect}]`, () => {
    it('every protected file and folder route answers each role as the table says', async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app, 'Owner');
      const users: Record<Exclude<Role, 'anon'>, TestUser> = {
        owner,
        none: await signUp(app, 'Stranger'),
        canView: await signUp(app, 'Viewer'),
        canDownload: await signUp(app, 'Downloader'),
        canEdit: await signUp(app, 'Editor'),
      };
      const other = await signUp(app, 'Other');
      const root = fixtureStep(await owner.api.get('/api/folders/root/subfolders'), 200, 'root').body.data.parentFolder.id;

      // The table covers every protected route of files, folders and permissions.
      const covered = new Set(MATRIX.map((row) => row.route));
      const routes = app.registeredRoutes
        .filter((r) => r.method !== 'HEAD' && /^\/api\/(files|folders|shared-with-me)/.test(r.url))
        .map((r) => `${r.method} ${r.url}`)
        .filter((r) => !NOT_IN_MATRIX.test(r));
      assert.ok(routes.length >= 25, `only ${routes.length} routes found`);
      assert.deepEqual(
        routes.filter((r) => !covered.has(r)),
        [],
        'routes missing from the matrix',
      );
      assert.deepEqual(
        [...covered].filter((r) => !routes.includes(r)),
        [],
        'matrix rows naming no registered route',
      );

      let serial = 0;
      async function fixture(): Promise<Fixture> {
        const mkdir = async (name: string, parentId: string) =>
          fixtureStep(await owner.api.post(`/api/folders/create/${owner.defaultBucketId}`, { name, parentId }), 201, `mkdir ${name}`).body
            .data.id as string;
        const shared = await mkdir(`S${++serial}`, root);
        const [child, target, trashedFolder] = [
          await mkdir('Child', shared),
          await mkdir('Target', shared),
          await mkdir('Trashed', shared),
        ];
        fixtureStep(await owner.api.delete(`/api/folders/delete/${trashedFolder}`), 200, 'trash folder');
        const first = await putFile(app, owner, shared, 'f.txt', 'version one');
        await putFile(app, owner, shared, 'f.txt', 'version two');
        const trashedFile = (await putFile(app, owner, shared, 't.txt', 'trashed')).id;
        fixtureStep(await owner.api.delete(`/api/files/delete/${trashedFile}`), 200, 'trash file');
        const versions = fixtureStep(await owner.api.get(`/api/files/versions/${first.id}`), 200, 'versions').body.data;
        fixtureStep(
          await owner.api.post(`/api/folders/share-users/${shared}`, {
            users: [
              { userId: users.canView.id, canView: true, canDownload: false, canEdit: false },
              { userId: users.canDownload.id, canView: true, canDownload: true, canEdit: false },
              { userId: users.canEdit.id, canView: true, canDownload: true, canEdit: true },
            ],
          }),
          201,
          'grant S',
        );
        fixtureStep(await owner.api.put(`/api/files/shared/${first.id}/${other.id}`, { canDownload: false }), 201, 'grant f.txt to other');
        fixtureStep(
          await owner.api.post(`/api/folders/share-users/${child}`, { users: [{ userId: other.id, canDownload: false }] }),
          201,
          'grant Child to other',
        );
        return {
          bucketId: owner.defaultBucketId,
          shared,
          child,
          target,
          trashedFolder,
          file: first.id,
          oldVersion: versions[1].id,
          trashedFile,
          other: other.id,
        };
      }

      const mismatches: string[] = [];
      let cells = 0;
      for (const row of MATRIX) {
        const shared = row.readOnly ? await fixture() : undefined;
        await Promise.all(
          ROLES.map(async (role, i) => {
            const fx = shared ?? (await fixture());
            const call = row.call(fx);
            const res = await send(role === 'anon' ? client(app) : users[role].api, call);
            cells++;
            if (res.status !== row.expect[i]) {
              mismatches.push(
                `${call.method} ${call.url} as ${role}: expected ${row.expect[i]}, got ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`,
              );
            }
          }),
        );
      }
      assert.equal(cells, MATRIX.length * ROLES.length);
      assert.deepEqual(mismatches, []);
    });
  });
}
