/**
 * Hearth's web client: registers an event queue, shows the view the address names,
 * and keeps everything current from the events. Preact renders; one signal (`rev`)
 * says when the state changed.
 */
import { render } from "preact";
import { useEffect, useLayoutEffect, useState } from "preact/hooks";
import "./app.css";
import { api, csrfToken, errorText } from "./api";
import { Compose } from "./compose";
import { pollForever, register } from "./events";
import { feed, openNarrow } from "./feed";
import { FeedView, hashOf } from "./feedview";
import { setAlert } from "./message";
import { parseHash, type Narrow } from "./narrow";
import { Panels, PanelButtons } from "./panelview";
import { People, PEOPLE_LIST_ID } from "./people";
import { Recent } from "./recent";
import { channelName, changed, connection, rev, S, streamKey, unreadCounts, userName } from "./state";
import { Sidebar } from "./sidebar";

function titleOf(n: Narrow): string {
  switch (n.kind) {
    case "channel":
      return n.topic === undefined ? `#${channelName(n.streamId)}` : `#${channelName(n.streamId)} > ${n.topic}`;
    case "dm":
      return n.ids.map(userName).join(", ");
    case "is":
      return { starred: "Starred messages", mentioned: "Mentions", dm: "Direct messages" }[n.what];
    case "search":
      return `Search: ${n.query}`;
    case "recent":
      return "Recent conversations";
    case "all":
      return "All messages";
  }
}

/** Who is typing in the open conversation. */
function Typing(_: { version: number }) {
  const n = feed.narrow;
  const key = n.kind === "channel" && n.topic !== undefined ? streamKey(n.streamId, n.topic) : n.kind === "dm" ? `d:${n.ids.join(",")}` : null;
  const typers = key ? [...(S.typing.get(key)?.entries() ?? [])].filter(([id, until]) => until > Date.now() && id !== S.me.user_id) : [];
  return (
    <div class="typing" aria-live="polite">
      {typers.length > 0 && `${typers.map(([id]) => userName(id)).join(", ")} ${typers.length === 1 ? "is" : "are"} typing…`}
    </div>
  );
}

function App() {
  const version = rev.value;
  const [navOpen, setNavOpen] = useState(false);
  const [peopleOpen, setPeopleOpen] = useState(false);
  const closePeople = () => {
    setPeopleOpen(false);
    document.querySelector<HTMLElement>(".top .people-toggle")?.focus();
  };
  const [notice, setNotice] = useState("");
  const [query, setQuery] = useState("");
  useEffect(() => setAlert(setNotice), []);
  // The people list over the feed goes away when the user turns to something else.
  // Listening from the same frame the list opens in (a layout effect), not a moment later.
  useLayoutEffect(() => {
    if (!peopleOpen) return;
    const away = (e: MouseEvent) => !(e.target as HTMLElement).closest?.(".people, .people-toggle") && setPeopleOpen(false);
    // Escape closes it wherever the focus is (a re-render may have taken it out of the list).
    const escape = (e: KeyboardEvent) => e.key === "Escape" && !document.querySelector(".panel, .profile-card") && closePeople();
    document.addEventListener("mousedown", away);
    document.addEventListener("keydown", escape);
    return () => {
      document.removeEventListener("mousedown", away);
      document.removeEventListener("keydown", escape);
    };
  }, [peopleOpen]);

  const total = unreadCounts().total;
  useEffect(() => {
    document.title = `${total ? `(${total}) ` : ""}${titleOf(feed.narrow)} - ${S.realmName || "Hearth"}`;
  });

  return (
    <div class={`app${navOpen ? " nav-open" : ""}`}>
      <header class="top">
        <button type="button" class="menu" aria-label="Show channels" aria-expanded={navOpen} onClick={() => setNavOpen(!navOpen)}>☰</button>
        <a class="realm" href="#recent">{S.realmName || "Hearth"}</a>
        <form class="search" role="search" onSubmit={(e) => {
          e.preventDefault();
          if (query.trim()) location.hash = hashOf({ kind: "search", query: query.trim() });
        }}>
          <input type="search" aria-label="Search messages" placeholder="Search" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        </form>
        <span class="me">{S.me.full_name}</span>
        <PanelButtons />
        <button type="button" class="people-toggle" aria-label="People" title="People" aria-controls={PEOPLE_LIST_ID} aria-expanded={peopleOpen} onClick={() => (peopleOpen ? closePeople() : setPeopleOpen(true))}>👥</button>
        {S.me.is_admin && <a class="admin-link" href="/admin">Administration</a>}
        <form class="logout" method="post" action="/logout">
          <input type="hidden" name="csrf_token" value={csrfToken()} />
          <button type="submit">Log out</button>
        </form>
      </header>
      {connection.value === "reconnecting" && <div class="banner" role="status">Reconnecting…</div>}
      {notice && (
        <div class="banner error" role="alert">
          {notice} <button type="button" onClick={() => setNotice("")}>Dismiss</button>
        </div>
      )}
      <Sidebar version={version} onNavigate={() => setNavOpen(false)} />
      <main class="main">
        <h1 class="view-title">{titleOf(feed.narrow)}</h1>
        {feed.narrow.kind === "recent" ? <Recent version={version} /> : <FeedView version={version} />}
        <Typing version={version} />
        <Compose version={version} />
      </main>
      <People version={version} open={peopleOpen} onClose={closePeople} />
      <Panels version={version} />
    </div>
  );
}

/** Presence while the page is open: active when seen, idle when hidden. */
function reportPresence(): void {
  const status = document.visibilityState === "visible" ? "active" : "idle";
  void api("POST", "/users/me/presence", { status, new_user_input: status === "active", ping_only: false, slim_presence: true })
    .then((answer) => {
      if (answer.presences) {
        for (const [id, p] of Object.entries(answer.presences as Record<string, any>)) S.presence.set(Number(id), { active: p.active_timestamp, idle: p.idle_timestamp });
        changed();
      }
    })
    .catch(() => {});
}

/** Links into the app (in messages, too) open their view in place. */
function followInternalLinks(event: MouseEvent): void {
  const link = (event.target as HTMLElement).closest?.("a");
  if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
  const href = link.getAttribute("href") ?? "";
  const hash = /^\/?(#(?:narrow|recent|feed|inbox|all_messages).*)$/.exec(href)?.[1];
  if (hash) {
    event.preventDefault();
    if (location.hash !== hash) location.hash = hash;
  } else if (link.closest(".rendered") && !href.startsWith("#")) {
    // Links in messages open beside the chat.
    link.target = "_blank";
    link.rel = "noopener noreferrer";
  }
}

async function start(): Promise<void> {
  const root = document.getElementById("app")!;
  try {
    await register();
  } catch (e) {
    root.textContent = `Could not load Hearth: ${errorText(e)}`;
    root.className = "fatal";
    return;
  }
  root.textContent = "";
  render(<App />, root);
  document.addEventListener("click", followInternalLinks);
  const route = () => void openNarrow(parseHash(location.hash));
  window.addEventListener("hashchange", route);
  route();
  reportPresence();
  setInterval(reportPresence, 60_000);
  document.addEventListener("visibilitychange", reportPresence);
  // Typing notices lapse without an event; presence dots age.
  setInterval(changed, 5_000);
  void pollForever();
}

void start();
