/**
 * HTTP requests with the path sent byte for byte. fetch() normalizes URLs
 * (`/static/../x` becomes `/x`), which hides exactly what path-traversal tests
 * need to send.
 */
import { connect } from "node:net";

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export function rawGet(baseUrl: string, rawPath: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
      socket.write(`GET ${rawPath} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n${extra}Connection: close\r\n\r\n`);
    });
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("end", () => {
      const text = Buffer.concat(chunks).toString("latin1");
      const headerEnd = text.indexOf("\r\n\r\n");
      const [statusLine, ...headerLines] = text.slice(0, headerEnd === -1 ? text.length : headerEnd).split("\r\n");
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
      if (!status) return reject(new Error(`not an HTTP response: ${JSON.stringify(text.slice(0, 200))}`));
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(":");
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status, headers, body: headerEnd === -1 ? "" : text.slice(headerEnd + 4) });
    });
  });
}
