// /openapi/v2, kept to what kubectl 1.32 asks of it. kubectl reads the v3 documents; it falls back to v2 only
// for a kind no v3 document has (a `kind: List` file, a kind the dev cluster does not serve), to ask whether the
// server validates fields itself. A v2 document without definitions answers "no" for such a kind, so kubectl
// skips its client-side check and the request reaches the server, which validates what it serves and answers a
// kind it does not serve as a real server does (kubectl: `no matches for kind "Deployment" in version
// "apps/v1"`). Without the document, kubectl stopped at "error validating data: the server could not find the
// requested resource".
import { SERVER_VERSION } from './discovery.js';

// what client-go asks for (an `@` Go's mime parser rejects), and what kube-openapi answers it with
const PROTOBUF_ASKED = ['application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf'];
const PROTOBUF_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
const TITLE = 'Kubernetes';

/** a length-delimited protobuf field (wire type 2) of a field number below 16 and a body under 128 bytes */
function field(number: number, body: Buffer): Buffer {
  if (number >= 16 || body.length >= 128) throw new Error('openapi v2: field out of the range this encoder writes');
  return Buffer.concat([Buffer.from([(number << 3) | 2, body.length]), body]);
}

/** gnostic's openapi_v2.Document: swagger (1), info (2: title 1, version 2), empty paths (8) and definitions (9) */
function protobufDocument(): Buffer {
  const info = Buffer.concat([field(1, Buffer.from(TITLE)), field(2, Buffer.from(SERVER_VERSION.gitVersion))]);
  return Buffer.concat([field(1, Buffer.from('2.0')), field(2, info), field(8, Buffer.alloc(0)), field(9, Buffer.alloc(0))]);
}

/** the document in the encoding the client accepts: protobuf when it names it (kubectl does), JSON otherwise */
export function openApiV2(accept: string | undefined): { contentType: string; body: Buffer } {
  if (PROTOBUF_ASKED.some((t) => accept?.includes(t))) return { contentType: PROTOBUF_TYPE, body: protobufDocument() };
  const json = { swagger: '2.0', info: { title: TITLE, version: SERVER_VERSION.gitVersion }, paths: {}, definitions: {} };
  return { contentType: 'application/json', body: Buffer.from(JSON.stringify(json)) };
}
