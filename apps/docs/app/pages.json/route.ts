import { markdownUrl, source } from "@/lib/source";

export const dynamic = "force-static";
export const revalidate = false;

/** Every page of the site with its Markdown copy: what the site test (and any crawler) walks. */
export function GET() {
  const pages = source.getPages().map((page) => ({
    url: page.url,
    markdown: markdownUrl(page),
    title: page.data.title,
  }));
  pages.sort((a, b) => a.url.localeCompare(b.url));
  return Response.json({ pages });
}
