import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sharedSerializers } from './shared-serializers.js';

const route = (schema: unknown) => ({ method: 'GET', url: '/x', httpStatus: '200', schema });

test('shared serializers: a schema met again in another app reuses its serializer; another schema gets its own', () => {
  const factory = sharedSerializers();
  const name = () => ({ type: 'object', properties: { name: { type: 'string' } } });
  const first = factory({}, {})(route(name()));
  const again = factory({}, {})(route(name()));
  assert.equal(again, first, 'the same schema, built anew by another app');
  const other = factory({}, {})(route({ type: 'object', properties: { size: { type: 'integer' } } }));
  assert.notEqual(other, first);
  assert.equal(other({ size: 3, name: 'x' }), '{"size":3}');
  assert.equal(first({ size: 3, name: 'x' }), '{"name":"x"}');
  const shared = { s: { $id: 's', type: 'object', properties: { id: { type: 'string' } } } };
  assert.notEqual(factory(shared, {})(route(name())), first, 'other shared schemas, another serializer');
  assert.notEqual(factory({}, { rounding: 'floor' })(route(name())), first, 'other options, another serializer');
});
