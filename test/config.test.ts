import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { CONFIG_VARIABLES, ConfigError, loadConfig, type Config } from '../src/config.js';

const GIB = 1024 ** 3;
const HEX_KEY = 'ab'.repeat(32);

/** Runs `fn`, asserts it throws a ConfigError, and returns it. */
function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a ConfigError, but the configuration loaded');
}

describe('config: defaults', () => {
  it('loads the documented defaults from an empty environment', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.registration, 'first-user');
    assert.equal(config.defaultQuotaBytes, 10 * GIB);
    assert.equal(config.maxUploadBytes, 10 * GIB);
    assert.equal(config.sessionTtlDays, 30);
    assert.equal(config.jsonBodyLimit, 1024 * 1024);
    assert.equal(config.loginMaxFailuresPerAccount, 5);
    assert.equal(config.loginMaxFailuresPerAddress, 20);
    assert.equal(config.loginWindowSeconds, 900);
    assert.equal(config.collectIntervalSeconds, 60);
    assert.equal(config.trustProxy, false);
    assert.equal(config.logLevel, 'info');
    assert.equal(config.databaseUrl, null, 'SQLite unless DATABASE_URL is set');
    assert.equal(config.masterKey, null);
    assert.equal(config.publicUrl, null, 'links take the origin of their request');
    assert.equal(config.dataDir, path.resolve('./data'));
    assert.ok(path.isAbsolute(config.dataDir));
  });

  it('with no argument reads nothing from process.env', () => {
    const saved = process.env.PORT;
    process.env.PORT = '1234';
    try {
      assert.equal(loadConfig().port, 8080);
    } finally {
      if (saved === undefined) delete process.env.PORT;
      else process.env.PORT = saved;
    }
  });

  it('treats an empty variable as unset', () => {
    const config = loadConfig({
      PORT: '',
      COFFRE_REGISTRATION: '',
      COFFRE_DEFAULT_QUOTA_BYTES: '',
      COFFRE_TRUST_PROXY: '',
      DATABASE_URL: '',
      LOG_LEVEL: '',
    });
    assert.equal(config.port, 8080);
    assert.equal(config.registration, 'first-user');
    assert.equal(config.defaultQuotaBytes, 10 * GIB);
    assert.equal(config.trustProxy, false);
    assert.equal(config.databaseUrl, null);
    assert.equal(config.logLevel, 'info');
  });

  it('agrees with the defaults listed in CONFIG_VARIABLES (the README table)', () => {
    const config = loadConfig({});
    const listed = new Map<string, string>(CONFIG_VARIABLES.map(([name, value]) => [name, value]));
    const numeric: [string, keyof Config][] = [
      ['PORT', 'port'],
      ['COFFRE_DEFAULT_QUOTA_BYTES', 'defaultQuotaBytes'],
      ['COFFRE_MAX_UPLOAD_BYTES', 'maxUploadBytes'],
      ['COFFRE_SESSION_TTL_DAYS', 'sessionTtlDays'],
      ['COFFRE_JSON_BODY_LIMIT', 'jsonBodyLimit'],
      ['COFFRE_LOGIN_MAX_FAILURES_PER_ACCOUNT', 'loginMaxFailuresPerAccount'],
      ['COFFRE_LOGIN_MAX_FAILURES_PER_ADDRESS', 'loginMaxFailuresPerAddress'],
      ['COFFRE_LOGIN_WINDOW_SECONDS', 'loginWindowSeconds'],
      ['COFFRE_COLLECT_INTERVAL_SECONDS', 'collectIntervalSeconds'],
      ['COFFRE_SHUTDOWN_GRACE_SECONDS', 'shutdownGraceSeconds'],
    ];
    for (const [name, key] of numeric) assert.equal(listed.get(name), String(config[key]), `${name} default`);
    assert.equal(listed.get('HOST'), config.host);
    assert.equal(listed.get('COFFRE_REGISTRATION'), config.registration);
    assert.equal(listed.get('COFFRE_TRUST_PROXY'), String(config.trustProxy));
    assert.equal(listed.get('LOG_LEVEL'), config.logLevel);
  });
});

describe('config: values', () => {
  it('reads every variable it is given', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '127.0.0.1',
      COFFRE_DATA_DIR: '/tmp/coffre-config-test',
      DATABASE_URL: 'postgresql://u@db:5432/coffre',
      COFFRE_PUBLIC_URL: 'https://files.example.com/',
      COFFRE_REGISTRATION: 'open',
      COFFRE_DEFAULT_QUOTA_BYTES: '1000',
      COFFRE_MAX_UPLOAD_BYTES: '500',
      COFFRE_SESSION_TTL_DAYS: '7',
      COFFRE_JSON_BODY_LIMIT: '4096',
      COFFRE_LOGIN_MAX_FAILURES_PER_ACCOUNT: '3',
      COFFRE_LOGIN_MAX_FAILURES_PER_ADDRESS: '9',
      COFFRE_LOGIN_WINDOW_SECONDS: '60',
      COFFRE_COLLECT_INTERVAL_SECONDS: '0',
      COFFRE_SHUTDOWN_GRACE_SECONDS: '45',
      COFFRE_TRUST_PROXY: 'yes',
      COFFRE_MASTER_KEY: HEX_KEY,
      LOG_LEVEL: 'warn',
    });
    assert.equal(config.port, 9000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.dataDir, '/tmp/coffre-config-test');
    assert.equal(config.databaseUrl, 'postgresql://u@db:5432/coffre');
    assert.equal(config.publicUrl, 'https://files.example.com', 'trailing slashes are trimmed');
    assert.equal(config.registration, 'open');
    assert.equal(config.defaultQuotaBytes, 1000);
    assert.equal(config.maxUploadBytes, 500);
    assert.equal(config.sessionTtlDays, 7);
    assert.equal(config.jsonBodyLimit, 4096);
    assert.equal(config.loginMaxFailuresPerAccount, 3);
    assert.equal(config.loginMaxFailuresPerAddress, 9);
    assert.equal(config.loginWindowSeconds, 60);
    assert.equal(config.collectIntervalSeconds, 0);
    assert.equal(config.shutdownGraceSeconds, 45);
    assert.equal(config.trustProxy, true);
    assert.equal(config.masterKey, HEX_KEY);
    assert.equal(config.logLevel, 'warn');
  });

  it('leaves the public URL to each request when it is not set, and refuses one that is no URL', () => {
    assert.equal(loadConfig({ PORT: '3000', COFFRE_PUBLIC_URL: '' }).publicUrl, null);
    assert.throws(() => loadConfig({ COFFRE_PUBLIC_URL: 'files.example.com' }), /COFFRE_PUBLIC_URL must be an absolute URL/);
  });

  it('accepts the three registration policies', () => {
    for (const policy of ['open', 'closed', 'first-user'] as const)
      assert.equal(loadConfig({ COFFRE_REGISTRATION: policy }).registration, policy);
  });

  it('reads booleans in their usual spellings', () => {
    for (const yes of ['1', 'true', 'TRUE', 'yes']) assert.equal(loadConfig({ COFFRE_TRUST_PROXY: yes }).trustProxy, true, yes);
    for (const no of ['0', 'false', 'False', 'no']) assert.equal(loadConfig({ COFFRE_TRUST_PROXY: no }).trustProxy, false, no);
  });

  it('accepts a base64 master key of 32 bytes', () => {
    const base64 = Buffer.alloc(32, 7).toString('base64');
    assert.equal(loadConfig({ COFFRE_MASTER_KEY: base64 }).masterKey, base64);
  });

  it('lets overrides win over the environment', () => {
    const config = loadConfig({ PORT: '9000', COFFRE_REGISTRATION: 'closed' }, { port: 1, registration: 'open', jsonBodyLimit: 2048 });
    assert.equal(config.port, 1);
    assert.equal(config.registration, 'open');
    assert.equal(config.jsonBodyLimit, 2048);
  });

  it('returns a frozen object', () => {
    const config = loadConfig({});
    assert.ok(Object.isFrozen(config));
    assert.throws(() => {
      (config as { port: number }).port = 1;
    }, TypeError);
    assert.equal(config.port, 8080);
    assert.ok(Object.isFrozen(loadConfig({}, { port: 1 })), 'frozen with overrides too');
  });
});

describe('config: invalid values', () => {
  it('names every bad variable in one ConfigError', () => {
    const error = configError(() => loadConfig({ PORT: 'abc', COFFRE_REGISTRATION: 'maybe' }));
    assert.equal(error.name, 'ConfigError');
    assert.equal(error.problems.length, 2, error.problems.join('\n'));
    assert.ok(
      error.problems.some((p) => p.startsWith('PORT') && p.includes('"abc"')),
      error.problems.join('\n'),
    );
    assert.ok(
      error.problems.some((p) => p.startsWith('COFFRE_REGISTRATION') && p.includes('"maybe"')),
      error.problems.join('\n'),
    );
    assert.match(error.message, /PORT/);
    assert.match(error.message, /COFFRE_REGISTRATION/);
  });

  it('collects all problems at once, not only the first', () => {
    const bad = {
      PORT: '70000',
      COFFRE_REGISTRATION: 'Open',
      DATABASE_URL: 'mysql://localhost/coffre',
      COFFRE_PUBLIC_URL: 'not a url',
      LOG_LEVEL: 'verbose',
      COFFRE_DEFAULT_QUOTA_BYTES: '-1',
      COFFRE_MAX_UPLOAD_BYTES: '0',
      COFFRE_SESSION_TTL_DAYS: '1.5',
      COFFRE_JSON_BODY_LIMIT: '100',
      COFFRE_LOGIN_MAX_FAILURES_PER_ACCOUNT: '0',
      COFFRE_LOGIN_MAX_FAILURES_PER_ADDRESS: 'many',
      COFFRE_LOGIN_WINDOW_SECONDS: '0',
      COFFRE_COLLECT_INTERVAL_SECONDS: '-5',
      COFFRE_TRUST_PROXY: 'maybe',
      COFFRE_MASTER_KEY: 'too-short',
      COFFRE_BLOB_STORE: 'ftp://files',
      COFFRE_TRASH_RETENTION_DAYS: 'forever',
      COFFRE_SHUTDOWN_GRACE_SECONDS: '0',
    };
    const error = configError(() => loadConfig(bad));
    for (const name of Object.keys(bad)) {
      assert.ok(
        error.problems.some((p) => p.startsWith(name)),
        `${name} is not named in:\n${error.problems.join('\n')}`,
      );
      assert.ok(error.message.includes(name));
    }
    assert.equal(error.problems.length, Object.keys(bad).length);
  });

  it('rejects integers out of range or with a fraction, and accepts the bounds', () => {
    for (const value of ['-1', '65536', '80.5', 'eighty']) configError(() => loadConfig({ PORT: value }));
    assert.equal(loadConfig({ PORT: '0' }).port, 0);
    assert.equal(loadConfig({ PORT: '65535' }).port, 65535);
    assert.equal(loadConfig({ COFFRE_JSON_BODY_LIMIT: '1024' }).jsonBodyLimit, 1024);
    configError(() => loadConfig({ COFFRE_JSON_BODY_LIMIT: '1023' }));
    assert.equal(loadConfig({ COFFRE_SESSION_TTL_DAYS: '3650' }).sessionTtlDays, 3650);
    configError(() => loadConfig({ COFFRE_SESSION_TTL_DAYS: '3651' }));
  });

  it('does not return a configuration when one value is bad among good ones', () => {
    const error = configError(() => loadConfig({ PORT: '9000', COFFRE_REGISTRATION: 'open', LOG_LEVEL: 'loud' }));
    assert.equal(error.problems.length, 1);
    assert.match(error.problems[0], /^LOG_LEVEL/);
  });
});

describe('config: COFFRE_BLOB_STORE', () => {
  it('defaults to the filesystem store', () => {
    assert.deepEqual(loadConfig({}).blobStore, { kind: 'fs' });
    assert.deepEqual(loadConfig({ COFFRE_BLOB_STORE: 'fs' }).blobStore, { kind: 'fs' });
  });

  it('reads an s3:// URL: bucket, prefix, endpoint, region, path style', () => {
    assert.deepEqual(
      loadConfig({
        COFFRE_BLOB_STORE:
          's3://coffre-blobs/prod/eu?endpoint=http://minio:9000&region=eu-west-3&forcePathStyle=true&partSize=16777216&queueSize=4',
      }).blobStore,
      {
        kind: 's3',
        partSize: 16 * 1024 * 1024,
        queueSize: 4,
        bucket: 'coffre-blobs',
        prefix: 'prod/eu/',
        endpoint: 'http://minio:9000',
        region: 'eu-west-3',
        forcePathStyle: true,
      },
    );
    assert.deepEqual(loadConfig({ COFFRE_BLOB_STORE: 's3://my.bucket', AWS_REGION: 'us-west-2' }).blobStore, {
      kind: 's3',
      partSize: 5 * 1024 * 1024,
      queueSize: 2,
      bucket: 'my.bucket',
      prefix: '',
      endpoint: null,
      region: 'us-west-2',
      forcePathStyle: false,
    });
  });

  it('refuses a bad URL with a message that shows the expected form', () => {
    for (const [raw, why] of [
      ['s3:/', /bucket name/],
      ['http://bucket', /unknown scheme "http"/],
      ['s3://Bad_Bucket', /bucket name/],
      ['s3://key:secret@bucket', /credentials/],
      ['s3://bucket?endpoint=nope', /endpoint/],
      ['s3://bucket?endpont=http://x', /unknown parameter\(s\) endpont/],
      ['s3://bucket?forcePathStyle=yes', /forcePathStyle/],
      ['s3://bucket?partSize=1048576', /partSize outside/],
      ['s3://bucket?queueSize=0', /queueSize outside/],
      ['not a url', /not a URL/],
    ] as const) {
      const error = configError(() => loadConfig({ COFFRE_BLOB_STORE: raw }));
      assert.equal(error.problems.length, 1, raw);
      assert.match(error.problems[0], /^COFFRE_BLOB_STORE /);
      assert.match(error.problems[0], why, raw);
      assert.match(error.problems[0], /expected `fs` or s3:\/\/bucket/);
    }
  });

  it('reads COFFRE_TRASH_RETENTION_DAYS (default 30, 0 turns the purge off)', () => {
    assert.equal(loadConfig({}).trashRetentionDays, 30);
    assert.equal(loadConfig({ COFFRE_TRASH_RETENTION_DAYS: '0' }).trashRetentionDays, 0);
    configError(() => loadConfig({ COFFRE_TRASH_RETENTION_DAYS: '-1' }));
  });
});
