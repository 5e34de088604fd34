// Import rules for src/, checked by `npm run lint:deps` and at the start of `npm test`
// (scripts/test.mjs). test/architecture/import-rules.test.ts proves each rule both ways.
// Paths below are regular expressions on paths relative to the directory depcruise runs in.

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'modules-use-content-index-only',
      severity: 'error',
      comment:
        'src/content/ is the content core; its only public entry point is src/content/index.ts. ' +
        'Segment codecs, crypto engines and native paths inside it are internal and may change ' +
        'shape at any time: feature modules import what they need from src/content/index.ts.',
      from: { path: '^src/modules/' },
      to: {
        path: '^src/content/',
        pathNot: '^src/content/index[.]ts$',
      },
    },
    {
      name: 'native-binding-stays-in-core',
      severity: 'error',
      comment:
        'src/content/native-addon.ts loads the optional native C addon: the native crypto engine, ' +
        'whose node engine twin must stay byte-for-byte equivalent. Only the content core ' +
        '(src/content/) may load it; everything else gets its work through the chosen engine.',
      from: { pathNot: ['^src/content/'] },
      to: { path: '^src/content/native-addon[.]ts$' },
    },
    {
      name: 'modules-do-not-reach-blob-stores',
      severity: 'error',
      comment:
        'Feature modules do not talk to blob stores (src/blobs/fs/, src/blobs/s3/, blob keys, ' +
        'the collector...): stored content goes through the content core. They may keep using ' +
        'src/blobs/blobs.repository.ts (database rows about blobs), and may import types from ' +
        'src/blobs/blob-store.ts (`import type`, erased at compile time).',
      from: { path: '^src/modules/' },
      to: {
        path: '^src/blobs/',
        pathNot: ['^src/blobs/blobs[.]repository[.]ts$', '^src/blobs/blob-store[.]ts$'],
      },
    },
    {
      // Same rule name as above: the second half of it. A value import of the blob-store
      // interface module is forbidden; an `import type` of it (dependency type 'type-only',
      // detected because tsPreCompilationDeps is true) is allowed.
      name: 'modules-do-not-reach-blob-stores',
      severity: 'error',
      comment:
        'Feature modules may import types from src/blobs/blob-store.ts (`import type`, erased at ' +
        'compile time), but no values: stored content goes through the content core.',
      from: { path: '^src/modules/' },
      to: {
        path: '^src/blobs/blob-store[.]ts$',
        dependencyTypesNot: ['type-only'],
      },
    },
    // The layers point one way: routes → services → repositories / content core / blobs → db.
    // The rules below forbid the edges that went back up.
    {
      name: 'only-the-app-imports-modules',
      severity: 'error',
      comment:
        'The feature modules (src/modules/) are the top of the service: only they, the app that ' +
        'mounts their routes (app.ts), the jobs that schedule their work (jobs.ts) and the ' +
        'programs that start it (server.ts, cli/) import them. The layers below (access, http, ' +
        'db, crypto, content, blobs, lib, config.ts, context.ts, errors.ts) do not: where they need ' +
        'something of a module, they declare an interface (context.ts: TokenLookup) or read through ' +
        'a repository of their own (access/access.repository.ts).',
      from: { path: '^src/', pathNot: '^src/(modules/|cli/|app[.]ts$|jobs[.]ts$|server[.]ts$)' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'db-is-the-bottom-layer',
      severity: 'error',
      comment:
        'src/db/ (connections, migrations, reference data, query helpers) is what every layer stands ' +
        'on: it imports nothing of the application but lib/, errors.ts and config.ts.',
      from: { path: '^src/db/' },
      to: { path: '^src/', pathNot: '^src/(db/|lib/|errors[.]ts$|config[.]ts$)' },
    },
    {
      name: 'crypto-runs-no-sql',
      severity: 'error',
      comment:
        'src/crypto/ (key wrapping, the keyring, the master key) is pure: it neither reaches the ' +
        'database nor any other layer; the SQL that stores keys lives in a repository ' +
        '(modules/buckets/buckets.repository.ts: rewrapBucketKeys), which calls into crypto.',
      from: { path: '^src/crypto/' },
      to: { path: '^src/', pathNot: '^src/(crypto/|lib/|errors[.]ts$|config[.]ts$)' },
    },
    {
      // Same rule name: the second half of it, the database drivers and the query builder.
      name: 'crypto-runs-no-sql',
      severity: 'error',
      comment: 'src/crypto/ runs no SQL: it imports neither the query builder nor a database driver.',
      from: { path: '^src/crypto/' },
      to: { path: '(^|/)node_modules/(kysely|pg|better-sqlite3)/' },
    },
    {
      name: 'config-imports-nothing-of-the-app',
      severity: 'error',
      comment:
        'src/config.ts is read by every layer, so it depends on none: the shapes it names (the S3 ' +
        'location, the crypto engine choice, the master key text) are declared in it.',
      from: { path: '^src/config[.]ts$' },
      to: { path: '^src/' },
    },
    {
      name: 'repositories-stay-below-services',
      severity: 'error',
      comment:
        'A repository (*.repository.ts) reads and writes rows: it imports no service, no routes, ' +
        'nothing of the HTTP layer and not the access policy, all of which are built on repositories.',
      from: { path: '^src/.+[.]repository[.]ts$' },
      to: { path: ['[.](service|routes)[.]ts$', '^src/http/', '^src/access/access[.]ts$'] },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      comment:
        'This import in src/ resolves to no file, package or node built-in: a typo, a missing ' +
        'dependency, or a resolution dependency-cruiser does not understand (in which case every ' +
        'other rule here may be blind to it, so fix the configuration).',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
    {
      name: 'no-test-in-src',
      severity: 'error',
      comment:
        'Application code must not import test code: test/ is not shipped (tsconfig.build.json ' +
        'builds src only) and test helpers are not production-grade.',
      from: { path: '^src/' },
      to: { path: '^test/' },
    },
  ],
  options: {
    // Only src/ is cruised: whatever src/ imports from elsewhere (node_modules, test/, the package
    // manifest) shows up as a dependency, so the rules above can see it, but is not followed.
    doNotFollow: { path: ['node_modules', '^(?!src/)'] },
    moduleSystems: ['es6', 'cjs'],
    // Also report imports that only exist before compilation (`import type`), tagged 'type-only',
    // so the rules see them and can tell them apart.
    tsPreCompilationDeps: true,
    // moduleResolution NodeNext: `./x.js` in the source resolves to ./x.ts (dependency-cruiser
    // falls back from .js to .ts/.tsx/.d.ts when the .js file does not exist).
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
  },
};
