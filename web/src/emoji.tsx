/** Emoji as the server names them: Unicode by code points, the organization's own as images. */
import type { Reaction } from "./model";
import { S } from "./state";

/** The picker's short list of common Unicode emoji (Zulip's names and codes). */
export const COMMON_EMOJI: [name: string, code: string][] = [
  ["thumbs_up", "1f44d"], ["heart", "2764"], ["joy", "1f602"], ["tada", "1f389"], ["smile", "1f642"],
  ["open_mouth", "1f62e"], ["cry", "1f622"], ["thinking", "1f914"], ["eyes", "1f440"], ["fire", "1f525"],
  ["rocket", "1f680"], ["clap", "1f44f"], ["pray", "1f64f"], ["100", "1f4af"], ["wave", "1f44b"],
  ["ok_hand", "1f44c"], ["muscle", "1f4aa"], ["sparkles", "2728"], ["star", "2b50"], ["coffee", "2615"],
  ["laughing", "1f606"], ["wink", "1f609"], ["heart_eyes", "1f60d"], ["sob", "1f62d"], ["thumbs_down", "1f44e"],
];

export function unicodeGlyph(code: string): string {
  try {
    return String.fromCodePoint(...code.split("-").map((hex) => Number.parseInt(hex, 16)));
  } catch {
    return "?";
  }
}

export function EmojiGlyph({ reaction }: { reaction: Pick<Reaction, "emoji_name" | "emoji_code" | "reaction_type"> }) {
  if (reaction.reaction_type === "realm_emoji") {
    const custom = S.realmEmoji.get(reaction.emoji_code);
    if (custom) return <img class="emoji" src={custom.source_url} alt={`:${reaction.emoji_name}:`} width={20} height={20} />;
  }
  if (reaction.reaction_type === "unicode_emoji") return <span class="emoji">{unicodeGlyph(reaction.emoji_code)}</span>;
  return <span class="emoji">:{reaction.emoji_name}:</span>;
}

export interface EmojiChoice {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
}

export function EmojiPicker({ onPick, onClose }: { onPick(choice: EmojiChoice): void; onClose(): void }) {
  const custom = [...S.realmEmoji.values()].filter((e) => !e.deactivated);
  return (
    <div class="emoji-picker" role="dialog" aria-label="Add a reaction" onKeyDown={(e) => e.key === "Escape" && onClose()}>
      {COMMON_EMOJI.map(([name, code]) => (
        <button type="button" key={name} title={`:${name}:`} aria-label={name} onClick={() => onPick({ emoji_name: name, emoji_code: code, reaction_type: "unicode_emoji" })}>
          {unicodeGlyph(code)}
        </button>
      ))}
      {custom.map((e) => (
        <button type="button" key={e.id} title={`:${e.name}:`} aria-label={e.name} onClick={() => onPick({ emoji_name: e.name, emoji_code: e.id, reaction_type: "realm_emoji" })}>
          <img class="emoji" src={e.source_url} alt="" width={20} height={20} />
        </button>
      ))}
    </div>
  );
}
