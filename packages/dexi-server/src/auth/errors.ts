/** An OAuth error as RFC 6749 §5.2 names them, with the HTTP status its endpoint answers. */
export class OAuthFailure extends Error {
  override readonly name = "OAuthFailure";
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
  }

  toJSON(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

/**
 * An authorization request that cannot be answered at the client's redirect URI (its client or
 * redirect URI is unknown or wrong): shown to the person in the browser instead, never redirected.
 */
export class UnsafeAuthorizationRequest extends Error {
  override readonly name = "UnsafeAuthorizationRequest";
}
