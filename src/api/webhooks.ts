import type { Hearth, UserRecord } from "../context";
import { authenticateApiKey } from "../auth/basic";
import { ApiError, missingArgument, unauthorized } from "../errors";
import { readRawParams } from "../http/wire";
import { ApiRoutes, jsonResponse } from "../http/route";
import { param } from "../http/params";
import { doSendWebhookMessage, jsonWebhookMessage, slackWebhookMessage } from "../actions/webhooks";


/**
 * `/api/v1/external/<integration>`: the key may come as Basic credentials or, as in the
 * webhook URLs Zulip hands out, as the `api_key` URL parameter. The body is the
 * service's payload, whatever its content type (curl's `-d` sends form-encoded).
 */
const webhookParams = { api_key: param.string().optional(), stream: param.string().optional(), topic: param.string().optional() };

function webhookUser(h: Hearth, user: UserRecord | null, apiKey: string | undefined, ip: string): UserRecord {
  // Zulip strips the key: services' URL templates often add a stray space or newline.
  const bot = user ?? (apiKey !== undefined ? authenticateApiKey(h, apiKey.trim(), () => ip) : null);
  if (!bot) throw unauthorized();
  return bot;
}

/** Slack's webhooks send JSON, or a form with the JSON in its `payload` field. */
async function slackPayload(request: Request): Promise<string> {
  if ((request.headers.get("content-type") ?? "").toLowerCase().startsWith("application/json")) return request.text();
  const payload = (await readRawParams(request)).fields.get("payload");
  if (payload === undefined) throw missingArgument("payload");
  return payload;
}

export function webhookRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .post(
      "/external/json",
      { auth: "optional", rawBody: true, allowIncomingWebhookBots: true, params: webhookParams },
      async ({ user, params, request, ip }) => {
        const bot = webhookUser(h, user, params.api_key, ip);
        const message = jsonWebhookMessage(await request.text());
        await doSendWebhookMessage(h, bot, message, { stream: params.stream, topic: params.topic }, "ZulipJSONWebhook");
        return {};
      },
    )
    .post(
      "/external/slack_incoming",
      { auth: "optional", rawBody: true, allowIncomingWebhookBots: true, params: webhookParams },
      async ({ user, params, request, ip }) => {
        const bot = webhookUser(h, user, params.api_key, ip);
        // Past authentication, Zulip answers in Slack's own shape: `ok`, and `error` on failure.
        try {
          const message = slackWebhookMessage(await slackPayload(request), params.topic);
          if (message) await doSendWebhookMessage(h, bot, message, { stream: params.stream, topic: params.topic }, "ZulipSlackIncomingWebhook");
        } catch (error) {
          if (error instanceof ApiError) return jsonResponse({ ok: false, error: error.message }, error.httpStatus);
          throw error;
        }
        return { ok: true };
      },
    );
}
