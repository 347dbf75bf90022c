/**
 * The one error class of the API (Zulip's JsonableError): a message, a Zulip error
 * code, an HTTP status, extra body fields and headers. Anything thrown that is not
 * an ApiError becomes a logged 500 with a generic message.
 */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string = "BAD_REQUEST",
    readonly httpStatus: number = 400,
    readonly data: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  body(): Record<string, unknown> {
    return { result: "error", msg: this.message, code: this.code, ...this.data };
  }
}

export const badRequest = (message: string, data: Record<string, unknown> = {}) =>
  new ApiError(message, "BAD_REQUEST", 400, data);

export const missingArgument = (name: string) =>
  new ApiError(`Missing '${name}' argument`, "REQUEST_VARIABLE_MISSING", 400, { var_name: name });

export const unauthorized = () =>
  new ApiError("Not logged in: API authentication or user session required", "UNAUTHORIZED", 401, {}, {
    "WWW-Authenticate": 'Basic realm="zulip"',
  });

export const invalidApiKey = () =>
  new ApiError("Invalid API key", "INVALID_API_KEY", 401, {}, { "WWW-Authenticate": 'Basic realm="zulip"' });

export const userDeactivated = () => new ApiError("Account is deactivated", "USER_DEACTIVATED", 401);

export const realmDeactivated = () => new ApiError("This organization has been deactivated", "REALM_DEACTIVATED", 401);

export const insufficientPermission = () => new ApiError("Insufficient permission", "UNAUTHORIZED_PRINCIPAL", 400);

export const mustBeAdmin = () => new ApiError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL", 400);

export const mustBeOwner = () => new ApiError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL", 400);

/** Zulip's `human_users_only` (and the bot half of `require_member_or_admin`). */
export const botRequestRefused = () => badRequest("This endpoint does not accept bot requests.");

export const notFound = (message = "Not Found") => new ApiError(message, "NOT_FOUND", 404);

/** Zulip's IncompatibleParametersError: the parameters named together, in its words. */
export const incompatibleParameters = (parameters: string[]) =>
  new ApiError(`Unsupported parameter combination: ${parameters.join(", ")}`, "INCOMPATIBLE_PARAMETERS", 400, { parameters: parameters.join(", ") });

export function rateLimited(retryAfterSeconds: number): ApiError {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return new ApiError("API usage exceeded rate limit", "RATE_LIMIT_HIT", 429, { "retry-after": seconds }, {
    "Retry-After": String(seconds),
  });
}
