// A small static file server for out/: serves /a/b from a/b, a/b.html or a/b/index.html, as the static
// export expects of its host. Used by `npm run preview` and by the site test. Loopback only by default.
import { createReadStream, statSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize, resolve, sep } from "node:path";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".md": "text/markdown; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".map": "application/json; charset=utf-8",
};

function isFile(path) {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The file a URL path names under root, or undefined; never a path outside root. */
export function resolveFile(root, urlPath) {
  let pathname;
  try {
    pathname = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  const base = resolve(root);
  const target = normalize(join(base, pathname));
  if (target !== base && !target.startsWith(base + sep)) return undefined;
  const candidates = pathname.endsWith("/")
    ? [join(target, "index.html")]
    : [target, `${target}.html`, join(target, "index.html")];
  return candidates.find(isFile);
}

function contentType(file) {
  const ext = extname(file);
  // Extensionless files are the exported route handlers (e.g. /api/search, the search index).
  return TYPES[ext] ?? (ext === "" ? "application/json; charset=utf-8" : "application/octet-stream");
}

/** Starts serving `root`; resolves to { url, close } once listening. Port 0 picks a free port. */
export function startStaticServer({ root, host = "127.0.0.1", port = 0 }) {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { Allow: "GET, HEAD" }).end();
      return;
    }
    const file = resolveFile(root, url.pathname);
    const notFound = file ? undefined : resolveFile(root, "/404.html");
    const path = file ?? notFound;
    if (!path) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("Not found");
      return;
    }
    // Next's build assets have content hashes in their names: cache them for good, revalidate the rest.
    const immutable = file !== undefined && url.pathname.startsWith("/_next/static/");
    res.writeHead(file ? 200 : 404, {
      "Content-Type": contentType(path),
      "Cache-Control": immutable ? "public, max-age=31536000, immutable" : "no-cache",
    });
    if (req.method === "HEAD") res.end();
    else createReadStream(path).pipe(res);
  });
  return new Promise((resolvePromise, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      const addr = server.address();
      const shownHost = host.includes(":") ? `[${host}]` : host;
      resolvePromise({
        url: `http://${shownHost}:${addr.port}`,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
