import type { FastifyReply } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { ERROR_CATALOG } from '../errors.js';

/** The response envelope of docs/api.md: `{status, message, data}`. */
export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({ status: Type.Integer(), message: Type.String(), data });
}

export function envelope<T>(data: T, status = 200, message = ''): { status: number; message: string; data: T } {
  return { status, message, data };
}

/**
 * `envelope(page)` as JSON bytes, for a page whose `data` items the database wrote as JSON (see
 * src/db/json-text.ts), given as their comma-separated UTF-8 bytes: spliced in as they are, not
 * parsed and serialized again, nor encoded again (a kept page is encoded once; see
 * listing.cache.ts). The route sends it with `sendJsonBytes`.
 */
export function pageEnvelopeBytes({ data, ...rest }: { data: Buffer; [field: string]: unknown }, status = 200, message = ''): Buffer {
  const others = JSON.stringify(rest);
  const head = `{"status":${status},"message":${JSON.stringify(message)},"data":{"data":[`;
  const tail = `]${others === '{}' ? '}' : `,${others.slice(1)}`}}`;
  return Buffer.concat([Buffer.from(head), data, Buffer.from(tail)]);
}

/** Sends JSON bytes as they are (Fastify sends a Buffer without serializing it). */
export function sendJsonBytes(reply: FastifyReply, bytes: Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(bytes);
}

export const ErrorBody = Type.Object(
  {
    status: Type.Integer({ description: 'Mirrors the HTTP status' }),
    message: Type.String(),
    code: Type.String({ enum: Object.keys(ERROR_CATALOG), description: 'Stable machine-readable code; see the error catalog' }),
    data: Type.Null(),
    details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), problem: Type.String() }))),
  },
  {
    $id: 'Error',
    title: 'Error',
    description: 'The body of every 4xx and 5xx response',
    examples: [{ status: 404, message: 'Folder not found', code: 'FOLDER_NOT_FOUND', data: null }],
  },
);

/** `{}`: what the API contract shows for folder/file update and delete. */
export const EmptyObject = Type.Object({}, { additionalProperties: false });

/** Error responses (by status) to document on a route, all with the error body. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of statuses) out[status] = Type.Ref('Error');
  return out;
}
