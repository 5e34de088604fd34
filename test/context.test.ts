import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { onePerContext, type AppContext } from '../src/context.js';

describe('onePerContext', () => {
  it('builds a service once per context, whoever asks, and apart for another context', () => {
    let builds = 0;
    const service = onePerContext((ctx) => ({ ctx, n: ++builds }));
    const first = {} as AppContext;
    const second = {} as AppContext;
    const a = service(first);
    assert.equal(service(first), a);
    assert.equal(builds, 1);
    const b = service(second);
    assert.notEqual(b, a);
    assert.equal(b.ctx, second);
    assert.equal(builds, 2);
  });
});
