import type { Hearth } from "../context";
import { commit } from "../events/commit";
import { badRequest } from "../errors";
import type { UserRecord } from "../store/users";
import { isHexColor } from "./channel_checks";
import { finishSubscribe, notifySubscribed, planSubscribe, writeSubscriptions, type SubscribeInput, type SubscribeResult } from "./subscriptions";
import { notifyUnsubscribed, planUnsubscribe, unsubscribeResult, writeUnsubscriptions, type UnsubscribeResult } from "./unsubscribe";

/**
 * `PATCH /users/me/subscriptions` (Zulip's older single call): removals, additions
 * and initial colors, checked first and written in one transaction, so a refused
 * request or a crash leaves every subscription as it was.
 */
export async function checkUpdateOwnSubscriptions(
  h: Hearth,
  actor: UserRecord,
  remove: string[],
  add: { name: string; description?: string; color?: string }[],
): Promise<SubscribeResult & UnsubscribeResult> {
  for (const a of add) if (a.color !== undefined && !isHexColor(a.color)) throw badRequest("Invalid color");
  const removing = new Set(remove.map((name) => name.trim().toLowerCase()));
  const both = add.find((a) => removing.has(a.name.trim().toLowerCase()));
  if (both) throw badRequest(`Cannot both subscribe to and unsubscribe from ${both.name.trim()}`);
  const removal = planUnsubscribe(h, actor, remove);
  const input: SubscribeInput = {
    subscriptions: add,
    authorizationErrorsFatal: true,
    announce: false,
    creation: { invite_only: false, is_web_public: false, is_default_stream: false, topics_policy: "inherit", groups: {} },
  };
  const addition = planSubscribe(h, actor, input);
  const outcome = await commit(h, (tx) => {
    const written = { added: writeSubscriptions(h, addition, input), removed: writeUnsubscriptions(h, removal) };
    notifySubscribed(tx, h, input, addition, written.added);
    notifyUnsubscribed(tx, h, written.removed);
    return written;
  });
  // Nothing to send here (no announcement, and the caller's own subscriptions get no message), so the events' order is kept.
  const subscribed = await finishSubscribe(h, actor, input, addition, outcome.added);
  return { ...subscribed, ...unsubscribeResult(outcome.removed) };
}
