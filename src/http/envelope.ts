import { Type, type TSchema } from 'typebox';
import { ERROR_CATALOG } from '../errors.js';

/** The response envelope of API.md §1: `{status, message, data}`. */
export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({ status: Type.Integer(), message: Type.String(), data });
}

export function envelope<T>(data: T, status = 200, message = ''): { status: number; message: string; data: T } {
  return { status, message, data };
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

/** `{}`: what the interface document shows for folder/file update and delete. */
export const EmptyObject = Type.Object({}, { additionalProperties: false });

/** Error responses (by status) to document on a route, all with the error body. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of statuses) out[status] = Type.Ref('Error');
  return out;
}
