import { DEFAULT_MAX_REQUEST_BODY_SIZE, readRequestBody } from "@modelcontextprotocol/server";

/**
 * A request's body read up to a bound, with the SDK's reader: a body that says it is larger is
 * refused before anything is read, one that turns out larger is not read past the bound.
 * `Request.text()` read everything first, so a client sending a chunked body without end filled
 * the process's memory (the SDK's Node adapter bounds what it hands on, other hosts need not).
 * Undefined when the body is larger than `maxBytes`.
 */
export async function readBodyText(
  request: Request,
  maxBytes = DEFAULT_MAX_REQUEST_BODY_SIZE,
): Promise<string | undefined> {
  const body = await readRequestBody(request, maxBytes);
  return body.tooLarge ? undefined : body.text;
}

/** The answer to a body over the bound, in the words of the SDK's Node adapter. */
export const BODY_TOO_LARGE = `Payload Too Large: Request body must not exceed ${DEFAULT_MAX_REQUEST_BODY_SIZE} bytes`;

/**
 * `response` with `done` called once its body has been read to the end, failed, or been cancelled
 * (the client hung up), or at once when it has none. A 2025-era POST is answered on an SSE stream
 * that outlives `handleRequest`: its end, not the return, is when the requests in it are answered.
 */
export function onBodyEnd(response: Response, done: () => void): Response {
  if (!response.body) {
    done();
    return response;
  }
  const reader = response.body.getReader();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    done();
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read();
        if (chunk.done) {
          end();
          controller.close();
        } else controller.enqueue(chunk.value);
      } catch (err) {
        end();
        controller.error(err);
      }
    },
    async cancel(reason) {
      end();
      await reader.cancel(reason);
    },
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
