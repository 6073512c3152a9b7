// Reading what dexi fetches from outside (client metadata documents, feeds), bounded.
/**
 * A response's body as text, or undefined once it passes `maxBytes`: what follows is not read (the
 * request is cancelled), so a server sending without end costs `maxBytes`, not all it can send
 * before the timeout. For what dexi fetches from outside: client metadata documents, feeds.
 */
export async function readResponseText(response: Response, maxBytes: number): Promise<string | undefined> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
