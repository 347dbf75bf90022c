import type { StateInline } from "markdown-it";
import { escapeHtml } from "../lib/text";
import { channelNarrowSlug, encodeHashComponent } from "./narrow_urls";
import type { Env, MentionableUser } from "./render_env";

/** `@**user**`, `@*group*`, wildcards and `#**channel>topic**` links, as Zulip renders them. */

const CHANNEL_WILDCARDS = new Set(["all", "everyone", "channel", "stream"]);

function precededByBoundary(state: StateInline): boolean {
  if (state.pos === 0) return true;
  return !/[\p{L}\p{N}_]/u.test(state.src[state.pos - 1]);
}

export function mentionRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x40 /* @ */ || !precededByBoundary(state)) return false;
  const rest = state.src.slice(state.pos);
  const env = state.env as unknown as Env;
  const user = /^@(_?)\*\*([^*\n]+?)\*\*/.exec(rest);
  if (user) {
    const isSilent = user[1] === "_";
    const text = user[2];
    const pipe = /^(.*)\|(\d+)$/.exec(text);
    let html: string | null = null;
    if (!pipe && CHANNEL_WILDCARDS.has(text)) {
      if (!isSilent) env.result.channelWildcard = true;
      html = `<span class="user-mention channel-wildcard-mention${isSilent ? " silent" : ""}" data-user-id="*">${isSilent ? "" : "@"}${escapeHtml(text)}</span>`;
    } else if (!pipe && text === "topic") {
      if (!isSilent) env.result.topicWildcard = true;
      html = `<span class="topic-mention${isSilent ? " silent" : ""}">${isSilent ? "" : "@"}topic</span>`;
    } else {
      let target: MentionableUser | undefined;
      if (pipe) {
        target = env.ctx.userById(Number(pipe[2]));
        // `@**name|id**` must name that user (Zulip: another's name is no mention).
        if (target && pipe[1] !== "" && pipe[1] !== target.full_name) target = undefined;
      } else {
        const matches = env.ctx.usersByName(text);
        // An ambiguous name mentions nobody; clients insert `Name|id` for those.
        if (matches.length === 1) target = matches[0];
      }
      if (target) {
        const quiet = isSilent || target.is_active === false;
        if (!quiet) env.result.mentionedUserIds.add(target.id);
        html = `<span class="user-mention${quiet ? " silent" : ""}" data-user-id="${target.id}">${quiet ? "" : "@"}${escapeHtml(target.full_name)}</span>`;
      }
    }
    if (html === null) return false;
    if (!silent) state.push("html_inline", "", 0).content = html;
    state.pos += user[0].length;
    return true;
  }
  const group = /^@(_?)\*([^*\n]+?)\*/.exec(rest);
  if (group) {
    const found = env.ctx.groupByName(group[2]);
    if (!found) return false;
    const isSilent = group[1] === "_" || found.deactivated === true;
    if (!isSilent) env.result.mentionedGroupIds.add(found.id);
    if (!silent) {
      state.push("html_inline", "", 0).content =
        `<span class="user-group-mention${isSilent ? " silent" : ""}" data-user-group-id="${found.id}">${isSilent ? "" : "@"}${escapeHtml(found.name)}</span>`;
    }
    state.pos += group[0].length;
    return true;
  }
  return false;
}

export function channelLinkRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x23 /* # */ || !precededByBoundary(state)) return false;
  const m = /^#\*\*([^*\n]+?)\*\*/.exec(state.src.slice(state.pos));
  if (!m) return false;
  const env = state.env as unknown as Env;
  // The first ">" separates the topic (Zulip's STREAM_TOPIC_LINK_REGEX); when no channel
  // has the name before it, the whole text may still name a channel (names may hold ">").
  const gt = m[1].indexOf(">");
  let channel = env.ctx.channelByName(gt === -1 ? m[1] : m[1].slice(0, gt));
  let topic = gt === -1 ? null : m[1].slice(gt + 1);
  if (!channel && gt !== -1) {
    channel = env.ctx.channelByName(m[1]);
    topic = null;
  }
  if (!channel) return false;
  if (!silent) {
    const base = `/#narrow/channel/${channelNarrowSlug(channel.id, channel.name)}`;
    // The empty topic shows as the organization's name for it, in <em> (FL 346).
    const shownTopic = (name: string) => (name === "" ? `<em>${escapeHtml(env.ctx.emptyTopicDisplayName ?? "general chat")}</em>` : escapeHtml(name));
    // `#**channel>topic@123**` links one message (FL 319).
    const message = topic === null ? null : /^([^]*)@(\d+)$/.exec(topic);
    let html: string;
    if (topic === null) {
      html = `<a class="stream" data-stream-id="${channel.id}" href="${escapeHtml(base)}">#${escapeHtml(channel.name)}</a>`;
    } else if (message) {
      html = `<a class="message-link" href="${escapeHtml(`${base}/topic/${encodeHashComponent(message[1])}/near/${message[2]}`)}">#${escapeHtml(channel.name)} &gt; ${shownTopic(message[1])} @ 💬</a>`;
    } else {
      // With the topic's newest readable message (FL 400; the oldest from FL 347), the
      // link follows the topic when it is moved (the empty topic's: /topic//with/214).
      const withId = env.ctx.topicLinkMessageId?.(channel.id, topic);
      const topicPath = `/topic/${encodeHashComponent(topic)}`;
      const withPath = withId === undefined ? "" : `/with/${withId}`;
      html = `<a class="stream-topic" data-stream-id="${channel.id}" href="${escapeHtml(base + topicPath + withPath)}">#${escapeHtml(channel.name)} &gt; ${shownTopic(topic)}</a>`;
    }
    state.push("html_inline", "", 0).content = html;
  }
  state.pos += m[0].length;
  return true;
}
