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
