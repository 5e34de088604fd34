import { randomBytes } from 'node:crypto';

/** A part of a multipart/form-data body. */
export interface Part {
  /** The form field name; `file` unless said otherwise. */
  field?: string;
  /** The part's filename; a part without one is a plain field. */
  filename?: string;
  data: Buffer | string;
  type?: string;
}

/** A multipart/form-data body built by hand, with a random boundary. */
export function multipart(parts: Part[]) {
  const boundary = `----coffre${randomBytes(12).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition =
      part.filename === undefined
        ? `form-data; name="${part.field ?? 'file'}"`
        : `form-data; name="${part.field ?? 'file'}"; filename="${part.filename}"`;
    const type = part.filename === undefined ? '' : `Content-Type: ${part.type ?? 'application/octet-stream'}\r\n`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`, 'utf8'));
    chunks.push(Buffer.isBuffer(part.data) ? part.data : Buffer.from(part.data));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
