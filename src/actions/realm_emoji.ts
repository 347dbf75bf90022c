import type { Hearth } from "../context";
import { commit, type Transaction } from "../events/commit";
import { badRequest, insufficientPermission } from "../errors";
import { inRealmGroup } from "../access/groups";
import { activeRealmEmojiByName, getRealmEmoji, putRealmEmoji, putRealmEmojiImage, type RealmEmoji } from "../store/realm_emoji";
import { emojiCodeFor } from "../markdown/emoji";
import type { Reaction } from "../store/messages";
import { activeUserIds, isAdmin, type UserRecord } from "../store/users";
import { realmEmojiDict, realmEmojiView } from "../views/realm_emoji";
import { MAX_EMOJI_FILE_SIZE_MIB, readUploadedImage } from "./avatars";

const emojiMissing = (name: string) => badRequest(`Emoji '${name}' does not exist`);

function checkEmojiName(name: string): string {
  if (name === "") throw badRequest("Emoji name is missing");
  if (name.length > 60) throw badRequest("emoji_name is too long (limit: 60 characters)");
  if (!/^[a-z0-9_ -]+$/.test(name) || /^[_ -]|[_ -]$/.test(name)) {
    throw badRequest("Emoji names must contain only lowercase alphanumeric characters, spaces, underscores, and dashes, and must start and end with a letter or number.");
  }
  return name;
}

type EmojiChange = { op: "add"; emoji: RealmEmoji } | { op: "update_one"; emoji: RealmEmoji; data: Record<string, unknown> };

/**
 * Clients with `individual_emoji_changes` (FL 491) get `add` / `update_one` for the
 * one emoji that changed; the rest get the whole dictionary in one `update`.
 */
function notifyRealmEmoji(tx: Transaction, h: Hearth, change: EmojiChange): void {
  const full = { type: "realm_emoji", op: "update", realm_emoji: realmEmojiDict(h) } as const;
  const individual =
    change.op === "add"
      ? ({ type: "realm_emoji", op: "add", emoji: realmEmojiView(h, change.emoji) } as const)
      : ({ type: "realm_emoji", op: "update_one", emoji_id: String(change.emoji.id), data: change.data } as const);
  tx.notify({ ...full, individual }, activeUserIds(h));
}

export async function doAddRealmEmoji(h: Hearth, user: UserRecord, rawName: string, file: File): Promise<RealmEmoji> {
  if (!inRealmGroup(h, user, "can_add_custom_emoji_group")) {
    throw insufficientPermission();
  }
  const name = checkEmojiName(rawName);
  const { data, contentType } = await readUploadedImage(file, MAX_EMOJI_FILE_SIZE_MIB);
  return commit(h, (tx) => {
    if (activeRealmEmojiByName(h.store, name)) throw badRequest("A custom emoji with this name already exists.");
    const e: RealmEmoji = { id: h.store.nextId("realm_emoji"), name, author_id: user.id, deactivated: false, content_type: contentType };
    putRealmEmoji(h.store, e);
    putRealmEmojiImage(h.store, e.id, data);
    notifyRealmEmoji(tx, h, { op: "add", emoji: e });
    return e;
  });
}

/** Administrators may remove any emoji; others only their own. */
export async function doDeactivateRealmEmoji(h: Hearth, user: UserRecord, name: string): Promise<void> {
  await commit(h, (tx) => {
    const e = activeRealmEmojiByName(h.store, name);
    if (!e) throw emojiMissing(name);
    if (!isAdmin(user) && e.author_id !== user.id) throw badRequest("Must be an organization administrator or emoji author");
    const next = { ...e, deactivated: true };
    putRealmEmoji(h.store, next);
    notifyRealmEmoji(tx, h, { op: "update_one", emoji: next, data: { deactivated: true } });
  });
}


// ---------------------------------------------------------------------------
// Emoji named in requests (reactions, statuses)

export interface ReactionInput {
  emoji_name: string;
  emoji_code?: string;
  reaction_type?: string;
}

/**
 * The kind of emoji a bare name means (Zulip's get_emoji_data): an active custom emoji
 * of that name first, then Zulip's own `zulip`, else Unicode.
 */
export function emojiTypeByName(h: Hearth, name: string): Reaction["reaction_type"] {
  if (activeRealmEmojiByName(h.store, name)) return "realm_emoji";
  return name === "zulip" ? "zulip_extra_emoji" : "unicode_emoji";
}

/** The code a name stands for in a kind of emoji, when there is one. */
export function emojiCodeByName(h: Hearth, name: string, type: string): string | undefined {
  if (type === "realm_emoji") {
    const custom = activeRealmEmojiByName(h.store, name);
    return custom && String(custom.id);
  }
  if (type === "zulip_extra_emoji") return name === "zulip" ? "zulip" : undefined;
  return emojiCodeFor(name);
}

/**
 * An emoji a client names (Zulip's check_emoji_request), for reactions and statuses:
 * Unicode by name or code, custom emoji by ID or active name, and Zulip's own extra emoji.
 */
export function checkEmojiRequest(h: Hearth, input: ReactionInput): Omit<Reaction, "user_id"> {
  const type = input.reaction_type ?? emojiTypeByName(h, input.emoji_name);
  if (type !== "unicode_emoji" && type !== "realm_emoji" && type !== "zulip_extra_emoji") throw badRequest("Invalid emoji type.");
  if (type === "unicode_emoji") {
    const byName = emojiCodeFor(input.emoji_name);
    const code = input.emoji_code ?? byName;
    if (!code || !/^[0-9a-f]+(-[0-9a-f]+)*$/.test(code)) throw badRequest(`Emoji '${input.emoji_name}' does not exist`);
    if (byName === undefined && input.emoji_code === undefined) throw badRequest(`Emoji '${input.emoji_name}' does not exist`);
    return { emoji_name: input.emoji_name, emoji_code: code, reaction_type: type };
  }
  if (type === "zulip_extra_emoji") {
    if (input.emoji_name !== "zulip") throw badRequest(`Emoji '${input.emoji_name}' does not exist`);
    return { emoji_name: "zulip", emoji_code: "zulip", reaction_type: type };
  }
  // Custom emoji: the code is the emoji's ID, checked with Zulip's errors; a name alone names the active one.
  if (input.emoji_code === undefined) {
    const byName = activeRealmEmojiByName(h.store, input.emoji_name);
    if (!byName) throw badRequest(`Emoji '${input.emoji_name}' does not exist`);
    return { emoji_name: byName.name, emoji_code: String(byName.id), reaction_type: "realm_emoji" };
  }
  const custom = /^\d+$/.test(input.emoji_code) ? getRealmEmoji(h.store, Number(input.emoji_code)) : undefined;
  if (!custom) throw badRequest("Invalid custom emoji.");
  if (custom.name !== input.emoji_name) throw badRequest("Invalid custom emoji name.");
  if (custom.deactivated) throw badRequest("This custom emoji has been deactivated.");
  return { emoji_name: custom.name, emoji_code: String(custom.id), reaction_type: "realm_emoji" };
}

