/** What a render is given (RenderContext) and what it reports (RenderResult); Env is markdown-it's per-render environment, shared by the rules. */

export interface MentionableUser {
  id: number;
  full_name: string;
  /** A deactivated user's mention renders silent and notifies nobody, as Zulip renders it. */
  is_active?: boolean;
}

export interface Linkifier {
  pattern: string;
  url_template: string;
}

/** What the renderer may look up; the caller decides visibility (e.g. private channels). */
export interface RenderContext {
  userById(id: number): MentionableUser | undefined;
  /** Users whose full name matches, case-insensitively (deactivated ones too, marked). */
  usersByName(name: string): MentionableUser[];
  /** A deactivated group's mention renders silent, as Zulip renders it. */
  groupByName(name: string): { id: number; name: string; deactivated?: boolean } | undefined;
  channelByName(name: string): { id: number; name: string } | undefined;
  linkifiers: Linkifier[];
  /** The organization's active custom emoji; they win over Unicode emoji of the same name, as in Zulip. */
  realmEmojiByName?(name: string): { id: number; url: string } | undefined;
  /**
   * The message a topic link's `with` operator names (FL 347; the newest readable since FL 400), so the link follows the
   * topic when it moves: undefined when the topic has no message the writer can read.
   */
  topicLinkMessageId?(channelId: number, topic: string): number | undefined;
  /** `realm_empty_topic_display_name`, shown (in <em>) for links to the empty topic. */
  emptyTopicDisplayName?: string;
  /** This server's address: links into its web app (`…/#narrow/…`) become relative, as Zulip writes them. */
  ownUrl?: string;
  /** The sender's `translate_emoticons` setting: `:)` and the like become emoji, as Zulip renders them. */
  translateEmoticons?: boolean;
  /** `realm_default_code_block_language`: the language of a code block that names none. */
  defaultCodeBlockLanguage?: string;
}

export interface RenderResult {
  html: string;
  /** Users mentioned by name (not silently). */
  mentionedUserIds: Set<number>;
  mentionedGroupIds: Set<number>;
  /** `@**all**`, `@**everyone**`, `@**channel**`, `@**stream**`. */
  channelWildcard: boolean;
  topicWildcard: boolean;
  linkUrls: string[];
}

export interface Env {
  ctx: RenderContext;
  result: RenderResult;
  /** KaTeX output written so far for this message (src/markdown/tex.ts). */
  texBytes?: number;
  /** Inside a spoiler: Zulip gives code blocks there (and in quotes within) no default language. */
  inSpoiler?: boolean;
  /** Code highlighted so far for this message (see highlightWithinBudget). */
  highlightedChars?: number;
}
