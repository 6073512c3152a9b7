/**
 * The client side of uploads (the MCP server's): each attachment and inline image of a compose call
 * is opened here with the daemon's own file rules (O_NOFOLLOW, a regular file judged by fstat on the
 * opened descriptor, nothing inside the chainmail home or under /etc, /proc, /sys, /dev, at most
 * 25 MiB), sent to the daemon in chunks, and the call then names `upload:ID` instead of the path.
 * upload.begin gets the real path of what was opened, which the daemon judges against its attach
 * roots (config.toml, which this process may not be able to read: the strong mode).
 */
import { homeRoots, loadFile } from "../compose/files.js";
import type { Home } from "../home.js";
import { UPLOAD_CHUNK_BYTES } from "../limits.js";
import { UPLOAD_PREFIX } from "../uploads/spool.js";
import type { DaemonClient } from "./index.js";

/** Uploads one file and returns the name a compose call gives in its place. */
export async function uploadFile(
  client: DaemonClient,
  file: string,
  what: string,
  home: Home,
): Promise<string> {
  const { content, real } = loadFile(file, what, { roots: null, home: homeRoots(home) });
  return `${UPLOAD_PREFIX}${await uploadBytes(client, content, real ?? file)}`;
}

/**
 * Uploads bytes already read, naming the real path they were read from (judged by the daemon against
 * its attach roots), and returns the upload's id.
 */
export async function uploadBytes(client: DaemonClient, content: Buffer, realPath: string): Promise<string> {
  const { upload_id } = await client.call("upload.begin", { path: realPath, size: content.length });
  for (let i = 0, at = 0; at < content.length; i++, at += UPLOAD_CHUNK_BYTES)
    await client.call("upload.chunk", {
      upload_id,
      index: i,
      data: content.subarray(at, at + UPLOAD_CHUNK_BYTES).toString("base64"),
    });
  await client.call("upload.finish", { upload_id });
  return upload_id;
}

interface WithFiles {
  attachments?: string[] | undefined;
  inline?: Array<{ name: string; path: string }> | undefined;
}

/** The params with every attachment and inline image uploaded first and named by its upload. */
export async function withUploads<P extends WithFiles>(
  client: DaemonClient,
  params: P,
  home: Home,
): Promise<P> {
  const out: P = { ...params };
  if (params.attachments) {
    const up: string[] = [];
    for (const [i, f] of params.attachments.entries())
      up.push(await uploadFile(client, f, `attachments[${i}]`, home));
    out.attachments = up;
  }
  if (params.inline) {
    const up: Array<{ name: string; path: string }> = [];
    for (const [i, img] of params.inline.entries())
      up.push({ name: img.name, path: await uploadFile(client, img.path, `inline[${i}].path`, home) });
    out.inline = up;
  }
  return out;
}
