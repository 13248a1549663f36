import { request as httpRequest } from 'node:http';
import { http } from './server.js';

/** POSTs files as multipart/form-data (parts named as given) and answers status and JSON body. */
export async function postMultipart(
  port: number,
  path: string,
  parts: Array<{ name: string; filename?: string; data: Buffer | string }>,
): Promise<{ status: number; body: any }> {
  const boundary = `----svc-test-${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disp = `form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}`;
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: ${disp}\r\n${p.filename ? 'Content-Type: application/zip\r\n' : ''}\r\n`,
      ),
    );
    chunks.push(Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  const res = await http({
    port,
    method: 'POST',
    path,
    headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` },
    body: Buffer.concat(chunks),
  });
  return { status: res.status, body: res.text ? res.json() : undefined };
}

/** A GET whose body is kept as bytes (a zip download). */
export function getBytes(
  port: number,
  path: string,
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, headers: { Connection: 'close' }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}
