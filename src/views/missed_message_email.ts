import type { Hearth } from "../context";
import { escapeHtml } from "../lib/text";
import type { MissedMessageTrigger } from "../store/account_emails";
import type { MessageRecord } from "../store/messages";
import { getUser, type UserRecord } from "../store/users";
import { channelNarrowSlug, encodeHashComponent } from "../markdown";
import { channelById } from "./message_channels";
import { messageNearUrl, realmSetting } from "./messages";
import { realmName } from "./realm";
import { userSetting } from "./settings";

/**
 * The email telling an offline user of the messages of one conversation (Zulip's
 * missed_message email): the messages as plain text (their Markdown, quoted) and as
 * simple HTML built from that same escaped text (never the rendered HTML: what a
 * sender wrote must not become markup in a mail client), a link to each message and
 * to the conversation, and the one-click unsubscribe link. When the organization or
 * the user keeps message content out of emails, only who wrote and where.
 */

export interface MissedMessage {
  message: MessageRecord;
  trigger: MissedMessageTrigger;
}

export interface BuiltEmail {
  subject: string;
  text: string;
  html: string;
}

/** Whether message content may appear in the user's notification emails (both the organization's and the user's settings). */
export function contentAllowedInEmails(h: Hearth, user: UserRecord): boolean {
  return realmSetting(h, "message_content_allowed_in_email_notifications", true) === true && userSetting(user, "message_content_in_email_notifications") === true;
}

/** The bucket a message's email belongs to: one channel topic, or one direct-message conversation. */
export function conversationOf(m: MessageRecord): string {
  return m.type === "stream" ? `c:${m.channel_id}:${m.topic.toLowerCase()}` : `d:${m.dm_user_ids!.join(",")}`;
}

function conversationUrl(h: Hearth, user: UserRecord, m: MessageRecord): string {
  const base = `${h.realmUrl()}/#narrow`;
  if (m.type === "stream") {
    const name = channelById(h, m.channel_id!)?.name ?? "";
    return `${base}/channel/${channelNarrowSlug(m.channel_id!, name)}/topic/${encodeHashComponent(m.topic)}`;
  }
  const others = m.dm_user_ids!.filter((id) => id !== user.id);
  return `${base}/dm/${(others.length > 0 ? others : [user.id]).join(",")}`;
}

const nameOf = (h: Hearth, id: number) => getUser(h.store, id)?.full_name ?? "Unknown user";

/** Where the conversation is, as its subject and header say it. */
function conversationTitle(h: Hearth, user: UserRecord, m: MessageRecord): string {
  if (m.type === "stream") {
    const channel = channelById(h, m.channel_id!)?.name ?? "unknown channel";
    const topic = m.topic === "" ? String(realmSetting(h, "empty_topic_display_name", "general chat")) : m.topic;
    return `#${channel} > ${topic}`;
  }
  const others = m.dm_user_ids!.filter((id) => id !== user.id).map((id) => nameOf(h, id));
  if (others.length <= 1) return `DMs with ${others[0] ?? user.full_name}`;
  return `Group DMs with ${others.join(", ")}`;
}

/** Why the user gets it, in the words of the footer. */
function reason(triggers: ReadonlySet<MissedMessageTrigger>): string {
  if (triggers.has("private_message")) return "you received direct messages";
  if (triggers.has("mentioned")) return "you were mentioned";
  if (triggers.has("followed_topic_email_notify") && triggers.size === 1) return "you follow this topic";
  return "everyone in the conversation was mentioned";
}

/** Markdown as plain text in an email: each line quoted, links to uploads made absolute. */
function quotedContent(h: Hearth, content: string): string {
  const absolute = content.replace(/(^|[\s(])\/user_uploads\//g, `$1${h.realmUrl()}/user_uploads/`);
  return absolute
    .split("\n")
    .map((line) => `> ${line}`)
    .join("\n");
}

function subjectFor(h: Hearth, user: UserRecord, title: string): string {
  // Zulip's realm_name_in_email_notifications_policy: 1 automatic (one organization
  // per server here, so no), 2 always, 3 never.
  const policy = userSetting(user, "realm_name_in_email_notifications_policy");
  return policy === 2 ? `[${realmName(h) ?? "Hearth"}] ${title}` : title;
}

export function buildMissedMessageEmail(h: Hearth, user: UserRecord, missed: readonly MissedMessage[], unsubscribeUrl: string): BuiltEmail {
  const messages = [...missed].sort((a, b) => a.message.id - b.message.id);
  const first = messages[0].message;
  const title = conversationTitle(h, user, first);
  const link = conversationUrl(h, user, first);
  const triggers = new Set(messages.map((m) => m.trigger));
  const senders = [...new Set(messages.map((m) => nameOf(h, m.message.sender_id)))];
  const settingsUrl = `${h.realmUrl()}/#settings/notifications`;
  const textParts: string[] = [];
  const htmlParts: string[] = [];
  if (contentAllowedInEmails(h, user)) {
    textParts.push(title, "");
    htmlParts.push(`<h2 style="font-size:16px"><a href="${escapeHtml(link)}">${escapeHtml(title)}</a></h2>`);
    let previousSender: number | null = null;
    for (const { message } of messages) {
      const url = messageNearUrl(h, message);
      if (message.sender_id !== previousSender) {
        textParts.push(`${nameOf(h, message.sender_id)}:`);
        htmlParts.push(`<p style="margin:12px 0 4px"><b>${escapeHtml(nameOf(h, message.sender_id))}</b></p>`);
        previousSender = message.sender_id;
      }
      const quoted = quotedContent(h, message.content);
      textParts.push(quoted, `(${url})`, "");
      const body = escapeHtml(quoted.replace(/^> ?/gm, "")).replace(/\n/g, "<br>");
      htmlParts.push(`<blockquote style="margin:0 0 4px;padding-left:8px;border-left:3px solid #ccc">${body}</blockquote><p style="margin:0 0 8px;font-size:12px"><a href="${escapeHtml(url)}">View message</a></p>`);
    }
  } else {
    const count = messages.length;
    const summary = `You have ${count} new message${count === 1 ? "" : "s"} from ${senders.join(", ")} in ${title}. This organization or your settings keep message content out of emails.`;
    textParts.push(summary, "");
    htmlParts.push(`<p>${escapeHtml(summary)}</p>`);
  }
  textParts.push(`Open the conversation: ${link}`, "", "--", `You are receiving this because ${reason(triggers)} while you were away from ${realmName(h) ?? "Hearth"}.`);
  textParts.push(`Stop these emails: ${unsubscribeUrl}`, `Notification settings: ${settingsUrl}`);
  htmlParts.push(
    `<p><a href="${escapeHtml(link)}">Open the conversation</a></p>`,
    `<hr><p style="font-size:12px;color:#666">You are receiving this because ${escapeHtml(reason(triggers))} while you were away from ${escapeHtml(realmName(h) ?? "Hearth")}.<br>` +
      `<a href="${escapeHtml(unsubscribeUrl)}">Stop these emails</a> · <a href="${escapeHtml(settingsUrl)}">Notification settings</a></p>`,
  );
  return {
    subject: subjectFor(h, user, title),
    text: textParts.join("\n") + "\n",
    html: `<!doctype html><html><body style="font-family:sans-serif">${htmlParts.join("\n")}</body></html>`,
  };
}
