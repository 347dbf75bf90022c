/**
 * Everyone in the organization, those present first, each a way to a direct message.
 * Beside the feed on a wide screen; on a narrow one (where it has no room) the header's
 * people button opens it over the feed, as Zulip's web app does with its right sidebar.
 */
import { useEffect, useRef } from "preact/hooks";
import { hashOf } from "./feedview";
import { Avatar } from "./message";
import { profileOf } from "./panels";
import { UserStatus } from "./profile";
import { presenceOf, S } from "./state";

const ORDER = { active: 0, idle: 1, offline: 2 };

export const PEOPLE_LIST_ID = "people-list";

export function People({ open = false, onClose = () => {} }: { version: number; open?: boolean; onClose?(): void }) {
  const list = useRef<HTMLElement>(null);
  // Opened as an overlay, the keyboard goes into it.
  useEffect(() => {
    if (open) list.current?.querySelector<HTMLElement>("a, button")?.focus();
  }, [open]);
  const people = [...S.users.values()]
    .filter((u) => u.is_active !== false && !u.is_bot)
    .map((u) => ({ u, presence: presenceOf(u.user_id) }))
    .sort((a, b) => ORDER[a.presence] - ORDER[b.presence] || a.u.full_name.localeCompare(b.u.full_name));
  return (
    <aside ref={list} id={PEOPLE_LIST_ID} class={`people${open ? " open" : ""}`} aria-label="People">
      <h2>
        People
        {open && <button type="button" class="close people-close" aria-label="Close the people list" onClick={onClose}>✕</button>}
      </h2>
      <ul>
        {people.map(({ u, presence }) => (
          <li key={u.user_id} data-user-id={u.user_id}>
            <a href={hashOf({ kind: "dm", ids: [u.user_id] })} title={`${u.full_name} (${presence})`} onClick={(e) => {
              // A click opens the profile card (which offers the DM); the link still works in a new tab.
              e.preventDefault();
              if (open) onClose();
              profileOf.value = u.user_id;
            }}>
              <Avatar userId={u.user_id} url={u.avatar_url} name={u.full_name} size={24} />
              <span class={`presence ${presence}`} aria-label={presence} />
              <span class="label">{u.full_name}</span>
              <UserStatus userId={u.user_id} />
            </a>
          </li>
        ))}
      </ul>
    </aside>
  );
}
