/**
 * The baseline bench server as a bin, wired as the v2 SDK's docs wire one: `serveStdio(factory)`
 * on stdio; with `--http HOST:PORT`, `createMcpHandler(factory)` through `toNodeHandler` on
 * node:http behind the SDK's localhost Host and Origin guards. No token check: that is kit work.
 * The HTTP modules load only for --http, as the kit's do, so a stdio start pays for neither.
 */
import type { AddressInfo } from "node:net";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { createBaselineServer } from "./sdk-fixture.js";

const at = process.argv.indexOf("--http");
if (at === -1) {
  serveStdio(() => createBaselineServer());
  process.stdin.once("end", () => process.exit(0));
} else {
  const [host = "127.0.0.1", port = "0"] = (process.argv[at + 1] ?? "").split(":");
  const { createServer } = await import("node:http");
  const { localhostHostValidation, localhostOriginValidation, toNodeHandler } = await import(
    "@modelcontextprotocol/node"
  );
  const { createMcpHandler } = await import("@modelcontextprotocol/server");
  const node = toNodeHandler(createMcpHandler(() => createBaselineServer()));
  const validHost = localhostHostValidation();
  const validOrigin = localhostOriginValidation();
  const server = createServer((req, res) => {
    if (!validHost(req, res) || !validOrigin(req, res)) return;
    void node(req, res);
  });
  server.listen(Number(port), host, () => {
    const { port: bound } = server.address() as AddressInfo;
    process.stderr.write(`bench-sdk listening on http://${host}:${bound}/mcp\n`);
  });
  process.once("SIGTERM", () => process.exit(0));
}
