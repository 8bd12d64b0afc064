// A paired device's side of the device channel, for the browser tests: a
// WebSocket client that sends the device token in the Authorization header,
// as a device does (a browser's WebSocket cannot set that header, and Node
// 20 has no WebSocket client), framed by hand after RFC 6455: masked text
// frames out, unmasked text frames in.
import { randomBytes, randomUUID } from 'node:crypto';
import { request } from 'node:http';

/** deviceSocket opens base's device channel with token; call(req) sends a
 * request with a fresh requestId and resolves its result frame. */
export async function deviceSocket(base, token) {
  const req = request(base + '/api/v1/device', {
    headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': randomBytes(16).toString('base64'), Authorization: 'Bearer ' + token },
  });
  const [sock, head] = await new Promise((resolve, reject) => {
    req.on('upgrade', (_, s, h) => resolve([s, h]));
    req.on('response', (r) => reject(new Error(`device channel: HTTP ${r.statusCode}, no upgrade`)));
    req.on('error', reject);
    req.end();
  });
  let buf = Buffer.from(head);
  const results = new Map(); // requestId → frame
  const waiters = new Map(); // requestId → resolve
  sock.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    for (;;) {
      if (buf.length < 2) return;
      let len = buf[1] & 127;
      let off = 2;
      if (len === 126) {
        if (buf.length < 4) return;
        len = buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (buf.length < 10) return;
        len = Number(buf.readBigUInt64BE(2));
        off = 10;
      }
      if (buf.length < off + len) return;
      const op = buf[0] & 15;
      const payload = buf.subarray(off, off + len).toString();
      buf = buf.subarray(off + len);
      if (op !== 1) continue; // only whole text frames carry results
      const m = JSON.parse(payload);
      const w = waiters.get(m.requestId);
      if (w) w(m);
      else results.set(m.requestId, m);
    }
  });
  const send = (obj) => {
    const p = Buffer.from(JSON.stringify(obj));
    const hdr = p.length < 126 ? Buffer.from([0x81, 0x80 | p.length]) : Buffer.from([0x81, 0x80 | 126, p.length >> 8, p.length & 255]);
    const mask = randomBytes(4);
    const body = Buffer.from(p.map((b, i) => b ^ mask[i & 3]));
    sock.write(Buffer.concat([hdr, mask, body]));
  };
  const call = (obj) =>
    new Promise((resolve, reject) => {
      const requestId = randomUUID();
      const timer = setTimeout(() => reject(new Error(`device channel: no answer to ${obj.type} in 10 s`)), 10000);
      waiters.set(requestId, (m) => {
        clearTimeout(timer);
        waiters.delete(requestId);
        resolve(m);
      });
      send({ ...obj, requestId });
    });
  return { call, close: () => sock.destroy() };
}
