import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../src/config.js';

describe('configuration', () => {
  it('has working defaults: port 8080, SQLite, first-user registration, 10 GiB quota', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.databaseUrl, null);
    assert.equal(config.registration, 'first-user');
    assert.equal(config.defaultQuotaBytes, 10 * 1024 ** 3);
    assert.equal(config.publicUrl, 'http://localhost:8080');
    assert.ok(Object.isFrozen(config));
  });

  it('names every bad variable in one error', () => {
    assert.throws(
      () => loadConfig({ PORT: 'abc', COFFRE_REGISTRATION: 'maybe', DATABASE_URL: 'mysql://x', COFFRE_MASTER_KEY: 'short' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.problems.length, 4);
        for (const name of ['PORT', 'COFFRE_REGISTRATION', 'DATABASE_URL', 'COFFRE_MASTER_KEY']) assert.ok(error.message.includes(name), name);
        return true;
      },
    );
  });

  it('reads PostgreSQL and other settings', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://u@h/db', PORT: '9000', COFFRE_PUBLIC_URL: 'https://files.example.com/', COFFRE_TRUST_PROXY: 'true' });
    assert.equal(config.databaseUrl, 'postgres://u@h/db');
    assert.equal(config.port, 9000);
    assert.equal(config.publicUrl, 'https://files.example.com');
    assert.equal(config.trustProxy, true);
  });
});
