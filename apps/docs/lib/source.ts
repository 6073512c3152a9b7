import { docs } from "fumadocs-mdx:collections/server";
import { type InferPageType, llms, loader } from "fumadocs-core/source";

export const source = loader({
  baseUrl: "/docs",
  source: docs.toFumadocsSource(),
});

export type DocPage = InferPageType<typeof source>;

/** Where the Markdown copy of a page is served: /docs/a/b -> /md/a/b.md, /docs -> /md/index.md. */
export function markdownUrl(page: DocPage): string {
  return page.slugs.length === 0 ? "/md/index.md" : `/md/${page.slugs.join("/")}.md`;
}

/** The route params that produce markdownUrl(page) under app/md/[[...slug]]. */
export function markdownParams(page: DocPage): string[] {
  if (page.slugs.length === 0) return ["index.md"];
  const slugs = [...page.slugs];
  slugs[slugs.length - 1] = `${slugs[slugs.length - 1]}.md`;
  return slugs;
}

/** The page a markdown route param list names, or undefined. */
export function pageFromMarkdownParams(slug: string[] | undefined): DocPage | undefined {
  if (!slug || slug.length === 0) return undefined;
  const last = slug[slug.length - 1];
  if (!last?.endsWith(".md")) return undefined;
  if (slug.length === 1 && last === "index.md") return source.getPage([]);
  return source.getPage([...slug.slice(0, -1), last.slice(0, -3)]);
}

export const docsLlms = llms(source, {
  renderPage: async (page: DocPage) =>
    `# ${page.data.title} (${page.url})\n\n${page.data.description ? `> ${page.data.description}\n\n` : ""}${await page.data.getText("processed")}`,
});
