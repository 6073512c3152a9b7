import { docsLlms, markdownUrl, source } from "@/lib/source";

export const dynamic = "force-static";
export const revalidate = false;

export async function GET() {
  // Agents read Markdown: point each entry at the page's Markdown copy rather than its HTML.
  const toMarkdown = new Map(source.getPages().map((page) => [page.url, markdownUrl(page)]));
  // redos-ok: a static route rendered at build time, over the site's own page index
  const index = (await docsLlms.index()).replace(/\]\((\/docs[^)\s]*)\)/g, (whole, url: string) => {
    const md = toMarkdown.get(url);
    return md ? `](${md})` : whole;
  });
  const note = [
    "",
    "## Markdown copies",
    "",
    "The links above are the Markdown copies; the page /docs/<path> is at /md/<path>.md (the overview at /md/index.md).",
    "All pages in one file: /llms-full.txt. Each server's full tool schemas: /<server>/mcp-tools.json.",
    "",
  ].join("\n");
  return new Response(index + "\n" + note, { headers: { "Content-Type": "text/plain; charset=utf-8" } });
}
