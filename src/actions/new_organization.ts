import type { Hearth } from "../context";
import { getChannelByName } from "../store/channels";
import { getRealm } from "../store/realm";
import { getSystemBot } from "../store/system_bots";
import type { UserRecord } from "../store/users";
import { checkSubscribe } from "./subscriptions";
import { doSendMessage } from "./message_send";
import { checkUpdateRealm } from "./realm_settings";

/**
 * The channels a new organization starts with, as the Zulip server creates them: three
 * public default channels (new users join them), #general also where new channels
 * are announced. The names are Zulip's, so clients and habits carry over.
 */
const STARTER_CHANNELS = [
  { name: "general", description: "For team-wide conversations", topic: "greetings" },
  { name: "sandbox", description: "Experiment here :test_tube:", topic: "experiments" },
  { name: "Zulip", description: "Questions and discussion about using the Zulip apps with this server", topic: "getting started" },
] as const;

function welcomeText(channel: (typeof STARTER_CHANNELS)[number]["name"], realmName: string): string {
  switch (channel) {
    case "general":
      return [
        `Welcome to **${realmName}**! :wave:`,
        "",
        "#**general** is for conversations that concern the whole team. Every message has a topic, like this one, " +
          "so several conversations can go on side by side without mixing. Say hello to your teammates here.",
      ].join("\n");
    case "sandbox":
      return [
        "Use #**sandbox** to try things out before you use them for real:",
        "",
        "* **bold**, *italics*, `code` and [links](https://zulip.com/help/format-your-message-using-markdown)",
        "* a mention (type @ and a name), or a channel link like #**general**",
        "* a new topic for each new conversation",
        "",
        "Nobody minds what happens here.",
      ].join("\n");
    case "Zulip":
      return [
        "This organization runs on Hearth, a server for the Zulip apps: the web, desktop, mobile and terminal " +
          "apps all connect to it. Ask here how to do something, and share what you find.",
        "",
        "Topics can be renamed, and messages moved to another topic or channel, when a conversation drifts.",
      ].join("\n");
  }
}

/**
 * Sets up a new organization's starting content: the starter channels with the owner
 * subscribed, #general for new-channel announcements, and a first message from
 * Welcome Bot in each channel, unread for the owner. Run once, right after
 * doInitRealm, by `hearth init` and by `hearth serve` on an empty data folder (the
 * test kit's organizations start without it). Each step is its own action; a channel
 * that already exists is left as it is.
 */
export async function doCreateStarterContent(h: Hearth, owner: UserRecord): Promise<void> {
  await checkSubscribe(h, owner, {
    subscriptions: STARTER_CHANNELS.map(({ name, description }) => ({ name, description })),
    principals: [owner.id],
    authorizationErrorsFatal: true,
    announce: false,
    sendNewSubscriptionMessages: false,
    creation: { invite_only: false, is_web_public: false, is_default_stream: true, topics_policy: "inherit", groups: {} },
  });
  const general = getChannelByName(h.store, "general");
  if (general) await checkUpdateRealm(h, owner, { settings: { new_stream_announcements_stream_id: general.id } });
  const bot = getSystemBot(h.store, "welcome");
  const realmName = getRealm(h.store)?.name ?? "Hearth";
  if (!bot) return;
  for (const { name, topic } of STARTER_CHANNELS) {
    const channel = getChannelByName(h.store, name);
    if (!channel) continue;
    await doSendMessage(h, bot, { target: { type: "stream", channel, topic }, content: welcomeText(name, realmName), client: "Internal", readBySender: true });
  }
}
