import type { Hearth } from "../context";
import { authenticateApiKey } from "../auth/basic";
import { unauthorized } from "../errors";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { doSendWebhookMessage, jsonWebhookMessage, WEBHOOK_INTEGRATIONS } from "../actions/webhooks";
import { defineStatePart } from "../events/state";

defineStatePart("realm_incoming_webhook_bots", ["realm_incoming_webhook_bots"], () => ({
  realm_incoming_webhook_bots: WEBHOOK_INTEGRATIONS.map((integration) => ({ ...integration })),
}));

/**
 * `/api/v1/external/<integration>`: the key may come as Basic credentials or, as in the
 * webhook URLs Zulip hands out, as the `api_key` URL parameter. The body is the
 * service's payload, whatever its content type (curl's `-d` sends form-encoded).
 */
export function webhookRoutes(h: Hearth) {
  return new ApiRoutes(h).post(
    "/external/json",
    { auth: "optional", rawBody: true, allowIncomingWebhookBots: true, params: { api_key: param.string().optional(), stream: param.string().optional(), topic: param.string().optional() } },
    async ({ user, params, request, ip }) => {
      // Zulip strips the key: services' URL templates often add a stray space or newline.
      const bot = user ?? (params.api_key !== undefined ? authenticateApiKey(h, params.api_key.trim(), () => ip) : null);
      if (!bot) throw unauthorized();
      const message = jsonWebhookMessage(await request.text());
      await doSendWebhookMessage(h, bot, message, { stream: params.stream, topic: params.topic }, "ZulipJSONWebhook");
      return {};
    },
  );
}
