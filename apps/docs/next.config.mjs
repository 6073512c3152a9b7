import { createMDX } from "fumadocs-mdx/next";

const withMDX = createMDX();

/** @type {import('next').NextConfig} */
const config = {
  // A static site: `next build` writes plain files to out/, served by any static server.
  output: "export",
  reactStrictMode: true,
  // No image optimizer exists without a server.
  images: { unoptimized: true },
};

export default withMDX(config);
