/** The left sidebar: views, channels with their recent topics, direct-message conversations. */
import { useState } from "preact/hooks";
import { api } from "./api";
import { SubscriptionSettings } from "./channels";
import { feed } from "./feed";
import { hashOf } from "./feedview";
import type { Narrow } from "./narrow";
import { changed, noteTopic, S, streamKey, unreadCounts, userName } from "./state";

const Count = ({ n }: { n: number | undefined }) => (n ? <span class="count" aria-label={`${n} unread`}>{n}</span> : null);

const isOpen = (n: Narrow) => hashOf(n) === hashOf(feed.narrow);

function Item({ narrow, label, count, className = "" }: { narrow: Narrow; label: string; count?: number; className?: string }) {
  const current = isOpen(narrow);
  return (
    <li class={`${className}${current ? " current" : ""}`}>
      <a href={hashOf(narrow)} aria-current={current ? "page" : undefined}>
        <span class="label">{label}</span>
        <Count n={count} />
      </a>
    </li>
  );
}

const fetchedTopics = new Set<number>();
async function fetchTopics(streamId: number): Promise<void> {
  if (fetchedTopics.has(streamId)) return;
  fetchedTopics.add(streamId);
  try {
    const { topics } = await api("GET", `/users/me/${streamId}/topics`);
    for (const t of topics) noteTopic(streamId, t.name, t.max_id);
    changed();
  } catch {
    fetchedTopics.delete(streamId);
  }
}

export function Sidebar({ onNavigate }: { onNavigate(): void; version: number }) {
  const [expanded, setExpanded] = useState<Set<number>>(new Set());
  const counts = unreadCounts();
  const open = feed.narrow.kind === "channel" ? feed.narrow.streamId : null;
  const subs = [...S.subs.values()].sort((a, b) => Number(b.pin_to_top) - Number(a.pin_to_top) || a.name.localeCompare(b.name));
  const toggle = (id: number) => {
    const next = new Set(expanded);
    if (next.has(id)) next.delete(id);
    else {
      next.add(id);
      void fetchTopics(id);
    }
    setExpanded(next);
  };
  if (open !== null && !fetchedTopics.has(open)) void fetchTopics(open);
  const dms = [...S.dms.entries()].sort((a, b) => b[1] - a[1]).slice(0, 20);

  return (
    <nav class="sidebar" aria-label="Channels and conversations" onClick={(e) => (e.target as HTMLElement).closest("a") && onNavigate()}>
      <ul class="views">
        <Item narrow={{ kind: "recent" }} label="Recent conversations" count={counts.total} />
        <Item narrow={{ kind: "all" }} label="All messages" />
        <Item narrow={{ kind: "is", what: "mentioned" }} label="Mentions" count={S.unreadMentions.size} />
        <Item narrow={{ kind: "is", what: "starred" }} label="Starred" />
        <Item narrow={{ kind: "is", what: "dm" }} label="Direct messages" count={counts.dms} />
      </ul>
      <h2>Channels</h2>
      <ul class="channels">
        {subs.map((sub) => {
          const showTopics = expanded.has(sub.stream_id) || open === sub.stream_id;
          const topics = showTopics ? [...(S.topics.get(sub.stream_id)?.values() ?? [])].sort((a, b) => b.maxId - a.maxId).slice(0, 8) : [];
          return (
            <li key={sub.stream_id} class={`channel${sub.is_muted ? " muted" : ""}`} data-stream-id={sub.stream_id}>
              <div class="channel-row">
                <button type="button" class="expand" aria-expanded={showTopics} aria-label={`Topics of ${sub.name}`} onClick={() => toggle(sub.stream_id)}>
                  {showTopics ? "▾" : "▸"}
                </button>
                <a href={hashOf({ kind: "channel", streamId: sub.stream_id })} class={isOpen({ kind: "channel", streamId: sub.stream_id }) ? "current" : ""}>
                  <span class="swatch" style={{ background: sub.color }} aria-hidden="true">{sub.invite_only ? "🔒" : "#"}</span>
                  <span class="label">{sub.name}</span>
                  <Count n={counts.byChannel.get(sub.stream_id)} />
                </a>
                <SubscriptionSettings sub={sub} />
              </div>
              {showTopics && topics.length > 0 && (
                <ul class="topics">
                  {topics.map((t) => {
                    const resolved = t.name.startsWith("✔ ");
                    return (
                      <Item
                        key={t.name}
                        className={`topic${resolved ? " resolved" : ""}`}
                        narrow={{ kind: "channel", streamId: sub.stream_id, topic: t.name }}
                        label={resolved ? `✔ ${t.name.slice(2)}` : t.name || "general chat"}
                        count={counts.byKey.get(streamKey(sub.stream_id, t.name))}
                      />
                    );
                  })}
                </ul>
              )}
            </li>
          );
        })}
      </ul>
      <h2>Direct messages</h2>
      <ul class="dms">
        {dms.map(([key]) => {
          const ids = key.split(",").map(Number);
          return <Item key={key} className="dm" narrow={{ kind: "dm", ids }} label={ids.map(userName).join(", ")} count={counts.byKey.get(`d:${key}`)} />;
        })}
      </ul>
    </nav>
  );
}
