export function resolveFile(root: string, urlPath: string): string | undefined;
export function startStaticServer(options: {
  root: string;
  host?: string;
  port?: number;
}): Promise<{ url: string; close: () => Promise<void> }>;
