/**
 * The one error the parser throws. `position` is 1-based and counts UTF-16 code units, like
 * JavaScript string indexes; `expected` names what would have been accepted there.
 */
export class QueryParseError extends Error {
  readonly code = "QUERY_PARSE";
  constructor(
    readonly position: number,
    readonly expected: string,
    message?: string,
  ) {
    super(message ?? `Expected ${expected} at position ${position}`);
    this.name = "QueryParseError";
  }
}

/** A query that parses but cannot be compiled for a target (e.g. a cursor from another query). */
export class QueryCompileError extends Error {
  readonly code = "QUERY_COMPILE";
  constructor(message: string) {
    super(message);
    this.name = "QueryCompileError";
  }
}
