/** A user's personal settings of a subscription (Zulip's do_change_subscription_property). */
import type { Hearth } from "../context";
import { commit } from "../events/commit";
import { badRequest } from "../errors";
import type { UserRecord } from "../store/users";
import { getSubscription, isSubscribed, putSubscription, type SubscriptionRecord } from "../store/subscriptions";
import { accessChannel } from "../access/channels";
import { getChannel } from "../store/channels";
import { isHexColor } from "./channel_checks";
import { aboutChannel } from "./channels_archived";

export const SUBSCRIPTION_PROPERTIES = [
  "color",
  "is_muted",
  "in_home_view",
  "pin_to_top",
  "desktop_notifications",
  "audible_notifications",
  "push_notifications",
  "email_notifications",
  "wildcard_mentions_notify",
] as const;

export interface SubscriptionPropertyChange {
  stream_id: number;
  property: string;
  value: unknown;
}

/** POST /users/me/subscriptions/properties (and the single-channel form). */
export async function checkUpdateSubscriptionProperties(h: Hearth, user: UserRecord, changes: SubscriptionPropertyChange[]): Promise<void> {
  const checked: { channelId: number; property: string; value: string | boolean }[] = [];
  for (const change of changes) {
    const channel = accessChannel(h, user, change.stream_id, { allowArchived: true });
    if (!isSubscribed(h.store, channel.id, user.id)) throw badRequest(`Not subscribed to channel ID ${channel.id}`);
    if (!(SUBSCRIPTION_PROPERTIES as readonly string[]).includes(change.property)) {
      throw badRequest(`Unknown subscription property: ${change.property}`);
    }
    if (change.property === "color") {
      if (!isHexColor(change.value)) throw badRequest("color is not a valid hex color code");
      checked.push({ channelId: channel.id, property: "color", value: change.value.toLowerCase() });
    } else {
      if (typeof change.value !== "boolean") throw badRequest(`${change.property} is not a boolean`);
      checked.push({ channelId: channel.id, property: change.property, value: change.value });
    }
  }
  await commit(h, (tx) => {
    const events: { channelId: number; property: string; value: string | boolean }[] = [];
    for (const c of checked) {
      const sub = getSubscription(h.store, c.channelId, user.id)!;
      const next = { ...sub } as SubscriptionRecord & Record<string, unknown>;
      if (c.property === "in_home_view" || c.property === "is_muted") {
        const muted = c.property === "is_muted" ? (c.value as boolean) : !(c.value as boolean);
        next.is_muted = muted;
        // FL 139: either property sends both events, so old and new clients stay in step.
        events.push({ channelId: c.channelId, property: "in_home_view", value: !muted }, { channelId: c.channelId, property: "is_muted", value: muted });
      } else {
        next[c.property] = c.value;
        events.push(c);
      }
      putSubscription(h.store, next);
    }
    for (const e of events) {
      const channel = getChannel(h.store, e.channelId)!;
      tx.notify(aboutChannel(channel, { type: "subscription", op: "update", stream_id: e.channelId, property: e.property, value: e.value }), [user.id]);
    }
  });
}
