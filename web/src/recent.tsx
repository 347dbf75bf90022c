/** Recent conversations: every topic and direct-message conversation, newest first, with unread counts. */
import { feed } from "./feed";
import { hashOf } from "./feedview";
import { timeOf, dateOf } from "./message";
import { S, streamKey, unreadCounts, userName } from "./state";

export function Recent(_: { version: number }) {
  const counts = unreadCounts();
  const rows: { key: string; maxId: number; where: preact.ComponentChildren; what: preact.ComponentChildren; unread: number }[] = [];
  for (const [streamId, topics] of S.topics) {
    const sub = S.subs.get(streamId);
    if (!sub) continue;
    for (const t of topics.values()) {
      rows.push({
        key: streamKey(streamId, t.name),
        maxId: t.maxId,
        where: <a href={hashOf({ kind: "channel", streamId })}>#{sub.name}</a>,
        what: <a href={hashOf({ kind: "channel", streamId, topic: t.name })}>{t.name || "general chat"}</a>,
        unread: counts.byKey.get(streamKey(streamId, t.name)) ?? 0,
      });
    }
  }
  for (const [key, maxId] of S.dms) {
    const ids = key.split(",").map(Number);
    rows.push({
      key: `d:${key}`,
      maxId,
      where: <span>Direct message</span>,
      what: <a href={hashOf({ kind: "dm", ids })}>{ids.map(userName).join(", ")}</a>,
      unread: counts.byKey.get(`d:${key}`) ?? 0,
    });
  }
  rows.sort((a, b) => b.maxId - a.maxId);
  return (
    <div class="recent feed">
      {feed.loading && !rows.length && <p class="loading">Loading…</p>}
      {feed.error && <p class="error" role="alert">{feed.error}</p>}
      {!feed.loading && !rows.length && <p class="empty">No conversations yet. Pick a channel and say hello.</p>}
      <table>
        <tbody>
          {rows.slice(0, 100).map((r) => {
            const m = S.messages.get(r.maxId);
            return (
              <tr key={r.key} class={r.unread ? "unread" : ""}>
                <td class="where">{r.where}</td>
                <td class="what">{r.what}</td>
                <td class="unread-count">{r.unread ? <span class="count">{r.unread}</span> : null}</td>
                <td class="when">{m ? `${dateOf(m.timestamp)} ${timeOf(m.timestamp)}` : ""}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
