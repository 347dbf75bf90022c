/** Notification Bot's messages about subscriptions, sent once a subscribe request committed. */
import type { Hearth } from "../context";
import { appendTo } from "../lib/collections";
import { channelLinkSyntax } from "../markdown/links";
import { silentMention } from "../markdown/syntax";
import { getUser, type UserRecord } from "../store/users";
import { getChannel, type ChannelRecord } from "../store/channels";
import { getSystemBot } from "../store/system_bots";
import { getRealm } from "../store/realm";
import { realmSetting } from "../store/realm_settings";
import { doSendMessage, sendSystemBotDm } from "./message_send";

/**
 * `announce`: Notification Bot posts to the organization's new-channel announcements
 * channel (topic "new channels"), as Zulip does; nothing when that setting is unset.
 * Private channels are never announced, so their names stay private.
 */
export async function announceNewChannels(h: Hearth, actor: UserRecord, created: ChannelRecord[]): Promise<void> {
  const announced = created.filter((c) => !c.invite_only);
  const targetId = realmSetting(getRealm(h.store)?.settings ?? {}, "new_stream_announcements_stream_id");
  const target = typeof targetId === "number" ? getChannel(h.store, targetId) : undefined;
  const bot = getSystemBot(h.store, "notification");
  if (announced.length === 0 || !target || target.is_archived || !bot) return;
  const links = announced.map((c) => channelLinkSyntax(c.id, c.name)).join(", ");
  const who = silentMention(actor);
  const content = announced.length === 1 ? `${who} created a new channel ${links}.` : `${who} created the following channels: ${links}.`;
  try {
    await doSendMessage(h, bot, { target: { type: "stream", channel: target, topic: "new channels" }, content, client: "Internal", readBySender: true });
  } catch (error) {
    // The channels exist and are subscribed; a failed announcement must not turn that into an error.
    console.error("Could not announce new channels:", error);
  }
}

/** Zulip's `max_bulk_new_subscription_messages`: larger requests send no direct messages. */
const MAX_BULK_NEW_SUBSCRIPTION_MESSAGES = 100;

/**
 * Users subscribed by someone else to existing channels get a direct message from
 * Notification Bot naming them (never for channels created by the same request, nor
 * for bots, nor when the request subscribed more than 100 users). Whether they went out
 * (false past that limit): the subscribe answer's `new_subscription_messages_sent` (FL 397).
 */
export async function sendNewSubscriptionMessages(h: Hearth, actor: UserRecord, added: { channel: ChannelRecord; userIds: number[] }[], created: ChannelRecord[]): Promise<boolean> {
  const createdIds = new Set(created.map((c) => c.id));
  const everyone = new Set(added.flatMap((a) => a.userIds));
  if (everyone.size > MAX_BULK_NEW_SUBSCRIPTION_MESSAGES) return false;
  const bot = getSystemBot(h.store, "notification");
  if (!bot) return false;
  const linksByUser = new Map<number, string[]>();
  for (const { channel, userIds } of added) {
    if (createdIds.has(channel.id)) continue;
    for (const id of userIds) {
      const user = getUser(h.store, id);
      if (id === actor.id || !user || user.is_bot) continue;
      appendTo(linksByUser, id, channelLinkSyntax(channel.id, channel.name));
    }
  }
  const who = silentMention(actor);
  // Sent together, so their commits batch instead of paying an fsync each.
  await Promise.all(
    [...linksByUser].map(async ([userId, links]) => {
      const content =
        links.length === 1
          ? `${who} subscribed you to ${links[0]}.`
          : `${who} subscribed you to the following channels:\n\n${links.map((link) => `* ${link}`).join("\n")}`;
      await sendSystemBotDm(h, bot, userId, content, "a new-subscription message");
    }),
  );
  return true;
}
