import type { Hearth } from "../context";
import { messageLinkSyntax } from "../markdown/links";
import { silentMention, truncateContent, unusedFence } from "../markdown/syntax";
import { badRequest } from "../errors";
import { getSystemBot } from "../store/system_bots";
import { getUser, type UserRecord } from "../store/users";
import { channelById } from "../views/message_channels";
import { realmSetting } from "../views/messages";
import { accessMessage } from "../access/messages";
import { MAX_MESSAGE_LENGTH } from "./message_content";
import { doSendMessage } from "./message_send";
import { REPORT_MESSAGE_TYPES } from "../store/realm_settings";

const MAX_REPORT_DESCRIPTION_LENGTH = 1000;
/** The reported message is quoted up to this length, so the report fits in one message (Zulip's rule). */
const MAX_REPORT_SNIPPET_LENGTH = MAX_MESSAGE_LENGTH - MAX_REPORT_DESCRIPTION_LENGTH - 500;


/**
 * `POST /messages/{message_id}/report` (FL 382): the Notification Bot posts the report
 * in the organization's moderation request channel, in a topic per reported user,
 * worded as Zulip words it.
 */
export async function checkReportMessage(h: Hearth, reporter: UserRecord, messageId: number, reportType: string, description: string): Promise<void> {
  const channelId = realmSetting<number>(h, "moderation_request_channel_id", -1);
  const channel = channelId === -1 ? undefined : channelById(h, channelId);
  if (!channel || channel.is_archived) throw badRequest("Moderation request channel must be specified to enable message reporting.");
  if (!Object.hasOwn(REPORT_MESSAGE_TYPES, reportType)) throw badRequest("Invalid report_type: Value error, Not in the list of possible values");
  if ([...description].length > MAX_REPORT_DESCRIPTION_LENGTH) throw badRequest(`description is too long (limit: ${MAX_REPORT_DESCRIPTION_LENGTH} characters)`);
  if (reportType === "other" && description.trim() === "") throw badRequest("An explanation is required.");
  const { message } = accessMessage(h, reporter, messageId);
  const sender = getUser(h.store, message.sender_id)!;
  const bot = getSystemBot(h.store, "notification");
  if (!bot) return;

  let header: string;
  if (message.type === "stream") {
    const where = channelById(h, message.channel_id!);
    header = `${silentMention(reporter)} reported ${messageLinkSyntax(message.channel_id!, where?.name ?? "unknown", message.topic, message.id)} sent by ${silentMention(sender)}.`;
  } else if (message.dm_user_ids!.length <= 2) {
    header = `${silentMention(reporter)} reported a DM sent by ${silentMention(sender)}.`;
  } else {
    const members = message.dm_user_ids!.map((id) => getUser(h.store, id)!).map(silentMention);
    const last = members.pop();
    header = `${silentMention(reporter)} reported a DM sent by ${silentMention(sender)} to ${members.join(", ")}, and ${last}.`;
  }
  const snippet = truncateContent(message.content, MAX_REPORT_SNIPPET_LENGTH);
  const fence = unusedFence(snippet);
  const content = `${header}\n- Reason: **${reportType}**\n- Notes:\n\`\`\`quote\n${description}\n\`\`\`\n${fence} spoiler **Message sent by ${silentMention(sender)}**\n${snippet}\n${fence}`;
  await doSendMessage(h, bot, {
    target: { type: "stream", channel, topic: `${sender.full_name}'s moderation requests` },
    content,
    client: "Internal",
    readBySender: true,
  });
}
