import { notFound } from "next/navigation";
import { docsLlms, markdownParams, pageFromMarkdownParams, source } from "@/lib/source";

export const dynamic = "force-static";
export const revalidate = false;

export async function GET(_req: Request, ctx: { params: Promise<{ slug?: string[] }> }) {
  const { slug } = await ctx.params;
  const page = pageFromMarkdownParams(slug);
  if (!page) notFound();
  return new Response(await docsLlms.page(page), {
    headers: { "Content-Type": "text/markdown; charset=utf-8" },
  });
}

export function generateStaticParams() {
  return source.getPages().map((page) => ({ slug: markdownParams(page) }));
}
