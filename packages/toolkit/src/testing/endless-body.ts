import { request } from "node:http";

/**
 * What a hostile client does to an HTTP endpoint that reads bodies whole: a POST whose chunked body
 * never ends. Writes 64 KiB chunks as fast as the connection takes them until the server answers
 * (or hangs up); resolves with the status (0: hung up without one) and how many bytes it sent.
 */
export function postWithoutEnd(
  url: string,
  headers: Record<string, string> = {},
  giveUpAfterBytes = 1024 * 1024 * 1024,
): Promise<{ status: number; sentBytes: number }> {
  const u = new URL(url);
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  let sent = 0;
  return new Promise((resolve) => {
    let settled = false;
    const done = (status: number) => {
      if (settled) return;
      settled = true;
      req.destroy();
      resolve({ status, sentBytes: sent });
    };
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: `${u.pathname}${u.search}`,
        method: "POST",
        headers: { "transfer-encoding": "chunked", ...headers },
      },
      (res) => {
        res.resume();
        done(res.statusCode ?? 0);
      },
    );
    req.on("error", () => done(0));
    const more = () => {
      while (!settled && sent < giveUpAfterBytes) {
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once("drain", more);
          return;
        }
      }
      if (!settled) req.end();
    };
    more();
  });
}
