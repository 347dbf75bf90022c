/**
 * People's profile cards (name, email, role, status, local time, a way to a direct
 * message), opened from a sender's name or avatar or from the people list; and user
 * statuses (emoji and text), kept from `user_status` in POST /register and its events.
 */
import { hashOf } from "./feedview";
import { EmojiGlyph } from "./emoji";
import { Avatar } from "./message";
import { onEvent, onRegister, profileOf } from "./panels";
import { presenceOf, rev, S } from "./state";
import { useEffect, useRef } from "preact/hooks";

interface Status {
  status_text?: string;
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
}
const statuses = new Map<number, Status>();

onRegister((state) => {
  statuses.clear();
  for (const [id, status] of Object.entries(state.user_status ?? {})) statuses.set(Number(id), status as Status);
});
onEvent((event) => {
  if (event.type !== "user_status") return;
  const { type: _type, id: _id, user_id, ...changes } = event;
  const next = { ...statuses.get(user_id), ...changes };
  if (!next.status_text && !next.emoji_name) statuses.delete(user_id);
  else statuses.set(user_id, next);
});

/** A member's status: its emoji, then its words. */
export function UserStatus({ userId }: { userId: number }) {
  const status = statuses.get(userId);
  if (!status) return null;
  return (
    <span class="user-status" title={status.status_text}>
      {status.emoji_name && status.emoji_code && <EmojiGlyph reaction={{ emoji_name: status.emoji_name, emoji_code: status.emoji_code, reaction_type: status.reaction_type ?? "unicode_emoji" }} />}
      {status.status_text && <span class="status-text">{status.status_text}</span>}
    </span>
  );
}

const ROLES: Record<number, string> = { 100: "Owner", 200: "Administrator", 300: "Moderator", 400: "Member", 600: "Guest" };

function localTime(timezone: string | undefined): string {
  if (!timezone) return "";
  try {
    return new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", timeZone: timezone });
  } catch {
    return "";
  }
}

export function ProfileCard() {
  void rev.value;
  const id = profileOf.value;
  const user = id === null ? undefined : S.users.get(id);
  const card = useRef<HTMLElement>(null);
  // Keyboard users land in the card, and back on what opened it when it closes.
  useEffect(() => {
    if (id === null) return;
    const opener = document.activeElement as HTMLElement | null;
    card.current?.querySelector<HTMLElement>(".close")?.focus();
    return () => {
      if (opener?.isConnected && (!document.activeElement || document.activeElement === document.body || card.current?.contains(document.activeElement))) opener.focus();
    };
  }, [id]);
  if (id === null || !user) return null;
  const close = () => (profileOf.value = null);
  const time = localTime((user as any).timezone);
  const role = user.is_bot ? "Bot" : ROLES[user.role ?? 400] ?? "Member";
  return (
    <section ref={card} class="panel profile-card" role="dialog" aria-label={`Profile of ${user.full_name}`} onKeyDown={(e) => e.key === "Escape" && close()}>
      <header>
        <h2 class="profile-name">{user.full_name}</h2>
        <button type="button" class="close" aria-label="Close" onClick={close}>✕</button>
      </header>
      <div class="profile-body">
        <Avatar userId={user.user_id} url={user.avatar_url} name={user.full_name} size={80} />
        <dl>
          <dt>Email</dt><dd class="profile-email">{user.email}</dd>
          <dt>Role</dt><dd class="profile-role">{role}</dd>
          <dt>Status</dt><dd class="profile-status">{presenceOf(user.user_id)} <UserStatus userId={user.user_id} /></dd>
          {time && (<><dt>Local time</dt><dd class="profile-time">{time}</dd></>)}
        </dl>
      </div>
      {user.user_id !== S.me.user_id && (
        <a class="send-dm" role="button" href={hashOf({ kind: "dm", ids: [user.user_id] })} onClick={close}>Send direct message</a>
      )}
    </section>
  );
}

/** A sender's name or avatar in the feed opens their card. */
document.addEventListener("click", (event) => {
  const target = event.target as HTMLElement;
  const hit = target.closest?.(".msg .sender, .msg .sender-avatar");
  if (!hit) return;
  const m = S.messages.get(Number(hit.closest("article.msg")?.getAttribute("data-id")));
  if (m) profileOf.value = m.sender_id;
});
