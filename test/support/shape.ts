import assert from 'node:assert/strict';

/** JSON types as the API contract's field tables name them. */
export type FieldType = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'localized';

/** Asserts one value has the JSON type of a field table row. */
export function assertFieldType(value: unknown, type: FieldType, field: string): void {
  switch (type) {
    case 'integer':
      assert.equal(typeof value, 'number', `${field} is a number`);
      assert.ok(Number.isInteger(value), `${field} is an integer, got ${String(value)}`);
      break;
    case 'number':
      assert.equal(typeof value, 'number', `${field} is a number`);
      assert.ok(Number.isFinite(value), `${field} is finite`);
      break;
    case 'array':
      assert.ok(Array.isArray(value), `${field} is an array`);
      break;
    case 'object':
      assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), `${field} is an object`);
      break;
    case 'localized': {
      // "object with language keys en and fr, string values"
      assertFieldType(value, 'object', field);
      const names = value as Record<string, unknown>;
      assert.deepEqual(Object.keys(names).sort(), ['en', 'fr'], `${field} has the keys en and fr`);
      assert.equal(typeof names.en, 'string', `${field}.en is a string`);
      assert.equal(typeof names.fr, 'string', `${field}.fr is a string`);
      break;
    }
    default:
      assert.equal(typeof value, type, `${field} is a ${type}`);
  }
}

/**
 * Asserts every field of a table is present with its type. Dotted names (`warning.is_low`) reach
 * into nested objects.
 */
export function assertFields(value: unknown, table: Record<string, FieldType>, what = 'value'): void {
  assertFieldType(value, 'object', what);
  for (const [field, type] of Object.entries(table)) {
    let current: unknown = value;
    for (const key of field.split('.')) {
      assert.ok(typeof current === 'object' && current !== null && Object.hasOwn(current, key), `${what} has ${field}`);
      current = (current as Record<string, unknown>)[key];
    }
    assertFieldType(current, type, `${what}.${field}`);
  }
}

/** Asserts the response envelope around `data`: {status, message, data}. */
export function assertEnvelope(body: any, status: number): void {
  assertFieldType(body, 'object', 'body');
  assert.equal(body.status, status, 'status mirrors the HTTP status');
  assert.equal(typeof body.message, 'string', 'message is a string');
  assert.ok(Object.hasOwn(body, 'data'), 'the envelope has data');
}
