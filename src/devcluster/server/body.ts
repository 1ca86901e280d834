// Request bodies: read with a size cap (413 beyond it) and decoded from JSON or YAML (400 when malformed).
import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { badRequest, requestEntityTooLarge } from '../api/errors.js';
import { decodeProtobufObject } from './body-protobuf.js';

export const DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024;

export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      req.resume();
      reject(requestEntityTooLarge(`limit is ${maxBytes}`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > maxBytes) {
        failed = true;
        reject(requestEntityTooLarge(`limit is ${maxBytes}`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    req.on('error', (e) => {
      if (!failed) reject(e);
    });
  });
}

/** the media type without parameters, lower-cased */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** decodes an object body: JSON, YAML (some clients send it) or Kubernetes protobuf (kubectl's typed clients) */
export function decodeBody(buf: Buffer, contentType: string | undefined): unknown {
  const type = mediaType(contentType);
  if (type === 'application/vnd.kubernetes.protobuf') return decodeProtobufObject(buf);
  const text = buf.toString('utf8');
  if (!text.trim()) throw badRequest('the body of the request was empty');
  if (type === 'application/yaml' || type === 'application/apply-patch+yaml') {
    try {
      return parseYaml(text);
    } catch (e) {
      throw badRequest(`error converting YAML to JSON: ${(e as Error).message}`);
    }
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw badRequest(`the object provided is unrecognized: couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
}

/** an object body: a JSON object, not an array or a scalar */
export function decodeObjectBody(buf: Buffer, contentType: string | undefined): Record<string, any> {
  const v = decodeBody(buf, contentType);
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw badRequest('the object provided is unrecognized: expected a JSON object');
  return v as Record<string, any>;
}
