// The *.channel.k8s.io framing: byte 0 = channel, the rest = payload; the base64 variants send text
// frames whose first character is the channel as an ASCII digit and whose rest is base64.

export interface ChannelMessage {
  channel: number;
  payload: Buffer;
}

export class ChannelCodec {
  constructor(readonly base64: boolean) {}

  /** `alloc`: where a binary frame's bytes go (channel-send.ts passes reused buffers) */
  encode(channel: number, payload: Uint8Array, alloc: (size: number) => Buffer = Buffer.allocUnsafe): Buffer | string {
    if (this.base64) return String.fromCharCode(48 + channel) + Buffer.from(payload).toString('base64');
    const frame = alloc(payload.length + 1);
    frame[0] = channel;
    frame.set(payload, 1);
    return frame;
  }

  /** undefined for an empty message (no channel byte), which the protocol ignores */
  decode(message: Buffer): ChannelMessage | undefined {
    if (message.length === 0) return undefined;
    if (this.base64) {
      const text = message.toString('latin1');
      return { channel: text.charCodeAt(0) - 48, payload: Buffer.from(text.slice(1), 'base64') };
    }
    return { channel: message[0]!, payload: message.subarray(1) };
  }
}

/** ws hands over Buffer, ArrayBuffer or Buffer[] depending on binaryType; normalise to one Buffer */
export function toBuffer(data: Buffer | ArrayBuffer | Buffer[]): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
