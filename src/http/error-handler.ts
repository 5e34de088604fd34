import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_CATALOG, InternalError, type ErrorCode, type ErrorDetail } from '../errors.js';
import { ID_BODY } from '../lib/ids.js';

function send(reply: FastifyReply, code: ErrorCode, message?: string, details?: ErrorDetail[]) {
  const status = ERROR_CATALOG[code].status;
  const body: Record<string, unknown> = { status, message: message ?? ERROR_CATALOG[code].message, code, data: null };
  if (details && details.length > 0) body.details = details;
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

// Fastify's own errors that are the client's fault, mapped onto catalog codes.
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'VALIDATION_FAILED',
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  FST_ERR_BAD_URL: 'VALIDATION_FAILED',
  FST_ERR_ASYNC_CONSTRAINT: 'VALIDATION_FAILED',
  FST_INVALID_MULTIPART_CONTENT_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_PARTS_LIMIT: 'PAYLOAD_TOO_LARGE',
  FST_FILES_LIMIT: 'PAYLOAD_TOO_LARGE',
  FST_FIELDS_LIMIT: 'PAYLOAD_TOO_LARGE',
  FST_REQ_FILE_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_PROTO_VIOLATION: 'VALIDATION_FAILED',
};

function validationDetails(error: FastifyError): ErrorDetail[] {
  return (error.validation ?? []).map((v) => {
    const missing = (v.params as { missingProperty?: string } | undefined)?.missingProperty;
    const base = v.instancePath ? v.instancePath.slice(1).replaceAll('/', '.') : '';
    const field = [error.validationContext, base, missing].filter(Boolean).join('.');
    return { field, problem: v.message ?? 'is not valid' };
  });
}

/** The one error handler: every failure leaves as the error envelope; 5xx never show their cause. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof AppError) {
      if (error.headers) reply.headers(error.headers);
      return send(reply, error.code, error.message, error.details);
    }
    if (error instanceof InternalError) {
      // A failure of the server's own that the catalog names (stored content damaged or lost),
      // found before any content left: the operator reads the cause in the log, the client the
      // catalog's code and message only.
      request.log.error({ err: error }, ERROR_CATALOG[error.code].message);
      return send(reply, error.code);
    }
    if (error.validation) {
      const details = validationDetails(error);
      if (error.validationContext === 'params') return send(reply, 'INVALID_ID', 'A path parameter is malformed', details);
      const badId = error.validation.some(
        (v) => v.keyword === 'pattern' && String((v.params as { pattern?: string }).pattern).includes(ID_BODY),
      );
      if (badId) return send(reply, 'INVALID_ID', `A malformed id: ${details.map((d) => d.field).join(', ')}`, details);
      return send(
        reply,
        'VALIDATION_FAILED',
        `The request is not valid: ${details.map((d) => `${d.field} ${d.problem}`).join('; ')}`,
        details,
      );
    }
    const mapped = error.code ? FASTIFY_CODES[error.code] : undefined;
    if (mapped) return send(reply, mapped);
    if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message))) return send(reply, 'INVALID_JSON');
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      request.log.info({ err: error }, 'client error');
      const byStatus: Partial<Record<number, ErrorCode>> = {
        404: 'ROUTE_NOT_FOUND',
        405: 'METHOD_NOT_ALLOWED',
        413: 'PAYLOAD_TOO_LARGE',
        415: 'UNSUPPORTED_MEDIA_TYPE',
        429: 'RATE_LIMITED',
      };
      return send(reply, byStatus[status] ?? 'VALIDATION_FAILED');
    }
    request.log.error({ err: error }, 'request failed');
    return send(reply, 'INTERNAL_ERROR');
  });

  app.setNotFoundHandler((request, reply) => send(reply, 'ROUTE_NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}`));
}
