import type { Hearth } from "../context";
import { commit } from "../events/commit";
import { ApiError } from "../errors";
import { accessMessage, invalidMessage, messageAudience } from "../access/messages";
import { emojiCodeFor, emojiNameFor } from "../markdown/emoji";
import { getMessage, MessageFlag, type Reaction } from "../store/messages";
import { getUserFlags, replaceMessage, setUserFlags } from "../store/user_messages";
import type { UserRecord } from "../store/users";
import { apiEmail } from "../views/users";
import { checkEmojiRequest, emojiCodeByName, emojiTypeByName, type ReactionInput } from "./realm_emoji";
import { participationPolicyChanges, publishPolicyChanges, writePolicyChanges } from "./user_topics";

/** Emoji reactions to a message (Zulip's zerver/actions/reactions.py). */

export async function checkReaction(h: Hearth, user: UserRecord, messageId: number, op: "add" | "remove", input: ReactionInput): Promise<void> {
  const { message } = accessMessage(h, user, messageId);
  let reaction: Omit<Reaction, "user_id">;
  if (op === "add") {
    // Zulip: adding an emoji someone already reacted with is a vote for that reaction,
    // under its name and without checking the emoji again (it may be a custom emoji
    // deactivated since).
    const type = input.reaction_type ?? emojiTypeByName(h, input.emoji_name);
    const code = input.emoji_code ?? emojiCodeByName(h, input.emoji_name, type);
    const voted = message.reactions.find((r) => r.emoji_code === code && r.reaction_type === type);
    reaction = voted ? { emoji_name: voted.emoji_name, emoji_code: voted.emoji_code, reaction_type: voted.reaction_type } : checkEmojiRequest(h, input);
  } else {
    const name = input.emoji_name ?? (input.emoji_code ? emojiNameFor(input.emoji_code) : undefined);
    reaction = { emoji_name: name ?? "", emoji_code: input.emoji_code ?? emojiCodeFor(name ?? "") ?? "", reaction_type: (input.reaction_type ?? "unicode_emoji") as Reaction["reaction_type"] };
  }
  const same = (r: Reaction) => r.user_id === user.id && r.reaction_type === reaction.reaction_type && (r.emoji_code === reaction.emoji_code || (!input.emoji_code && r.emoji_name === reaction.emoji_name));
  await commit(h, (tx) => {
    const m = getMessage(h.store, messageId);
    if (!m) throw invalidMessage();
    const existing = m.reactions.find(same);
    if (op === "add" && existing) throw new ApiError("Reaction already exists.", "REACTION_ALREADY_EXISTS");
    if (op === "remove" && !existing) throw new ApiError("Reaction doesn't exist.", "REACTION_DOES_NOT_EXIST");
    const reactions = op === "add" ? [...m.reactions, { ...reaction, user_id: user.id }] : m.reactions.filter((r) => r !== existing);
    replaceMessage(h.store, m, { ...m, reactions });
    // Reacting to a message one only sees historically gives it a row, as in Zulip.
    if (op === "add" && getUserFlags(h.store, user.id, m.id) === undefined) setUserFlags(h.store, user.id, m, undefined, MessageFlag.read | MessageFlag.historical);
    const policies = op === "add" && m.type === "stream" ? writePolicyChanges(h, participationPolicyChanges(h, user, m.channel_id!, m.topic)) : [];
    const changed = op === "add" ? { ...reaction, user_id: user.id } : existing!;
    tx.notify(
      {
        type: "reaction",
        op,
        user_id: user.id,
        user: { user_id: user.id, email: apiEmail(h, user), full_name: user.full_name },
        message_id: messageId,
        emoji_name: changed.emoji_name,
        emoji_code: changed.emoji_code,
        reaction_type: changed.reaction_type,
      },
      messageAudience(h, m),
    );
    publishPolicyChanges(tx, h, policies);
  });
}
