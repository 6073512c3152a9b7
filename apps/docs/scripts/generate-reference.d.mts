export interface ServerSpec {
  id: string;
  title: string;
  pkg: string;
  bin: string;
  args: string[];
}
export interface ManifestServer {
  id: string;
  title: string;
  status: "generated" | "fixture" | "skipped" | "failed";
  reason?: string;
  tools: string[];
  toolPages: string[];
  toolsJson?: string;
}
export const SERVERS: ServerSpec[];
export function generate(opts: {
  fixtures?: string;
  appDir?: string;
}): Promise<{ generatedAt: string; servers: ManifestServer[] }>;
