import { defineConfig, defineDocs } from "fumadocs-mdx/config";

export const docs = defineDocs({
  dir: "content/docs",
  docs: {
    // The llms routes (llms-full.txt, /md/...) render each page from its processed Markdown.
    postprocess: { includeProcessedMarkdown: true },
  },
});

export default defineConfig();
