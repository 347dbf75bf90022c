/**
 * The compose box: to a channel and topic (topics of the channel offered as you
 * type) or to people directly. Enter sends, Shift+Enter starts a new line; what the
 * server refuses is said beside the box, and the text stays. Typing notices go out
 * while writing and stop when the text is sent or left.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, errorText } from "./api";
import { applyCompletion, comboboxAttributes, complete, CompletionList, type Completion, type Suggestion } from "./autocomplete";
import { composeRequest } from "./compose_request";
import { draftText, isSavedDraft, loadDrafts, saveDraftNow, saveDraftSoon } from "./drafts";
import { feed } from "./feed";
import { S, userName } from "./state";
import { Uploader } from "./upload";

type Target = { kind: "channel"; streamId: number; topic: string } | { kind: "dm"; ids: number[] };

/** Recipients typed as e-mail addresses or full names, comma-separated. */
function parseRecipients(text: string): { ids: number[]; unknown: string[] } {
  const ids: number[] = [];
  const unknown: string[] = [];
  for (const token of text.split(",").map((t) => t.trim()).filter(Boolean)) {
    const lower = token.toLowerCase();
    const user = [...S.users.values()].find((u) => u.email.toLowerCase() === lower || u.full_name.toLowerCase() === lower);
    if (user) ids.push(user.user_id);
    else unknown.push(token);
  }
  return { ids, unknown };
}

const emailsOf = (ids: number[]) => ids.filter((id) => id !== S.me.user_id || ids.length === 1).map((id) => S.users.get(id)?.email ?? "").join(", ");

export function Compose({ version }: { version: number }) {
  const [mode, setMode] = useState<"channel" | "dm">("channel");
  const [streamId, setStreamId] = useState<number | null>(null);
  const [topic, setTopic] = useState("");
  const [recipients, setRecipients] = useState("");
  const [content, setContent] = useState("");
  const [error, setError] = useState("");
  const [sending, setSending] = useState(false);
  const typing = useRef<{ key: string; at: number; stop: ReturnType<typeof setTimeout> | null }>({ key: "", at: 0, stop: null });
  const box = useRef<HTMLTextAreaElement>(null);
  const pickFile = useRef<((file: File) => void) | null>(null);
  const [draftsReady, setDraftsReady] = useState(false);
  const [preview, setPreview] = useState<string | null>(null);
  useEffect(() => void loadDrafts().then(() => setDraftsReady(true)), []);
  const [completion, setCompletion] = useState<Completion | null>(null);
  const [selected, setSelected] = useState(0);
  const suggest = (field: HTMLTextAreaElement) => {
    setCompletion(complete(field.value.slice(0, field.selectionStart)));
    setSelected(0);
  };
  const pick = (choice: Suggestion) => {
    const field = box.current;
    if (!field || !completion) return;
    const next = applyCompletion(field.value, field.selectionStart, completion, choice);
    setContent(next.text);
    setCompletion(null);
    // The value is set now so the caret can be placed; Preact writes the same text after.
    field.value = next.text;
    field.setSelectionRange(next.caret, next.caret);
    field.focus();
  };

  // The open view chooses where the next message goes.
  const n = feed.narrow;
  const viewKey = JSON.stringify(n);
  useEffect(() => {
    if (n.kind === "channel") {
      setMode("channel");
      setStreamId(n.streamId);
      setTopic(n.topic ?? "");
    } else if (n.kind === "dm") {
      setMode("dm");
      setRecipients(emailsOf(n.ids));
    }
    // Each conversation's box holds its own draft. Text not yet saved as a draft (typed
    // while the view was loading) stays, so nothing typed is lost.
    if (draftsReady && (n.kind === "channel" || n.kind === "dm")) {
      const saved = draftText(n.kind === "channel" ? { kind: "channel", streamId: n.streamId, topic: n.topic ?? "" } : { kind: "dm", ids: n.ids });
      setContent((c) => (!c.trim() || isSavedDraft(c) ? saved : c));
      setPreview(null);
    }
    setError("");
  }, [viewKey, draftsReady]);

  // Quote and reply: to the quoted message's conversation, the quote after any text.
  const request = composeRequest.value;
  useEffect(() => {
    if (!request) return;
    const t = request.target;
    if (t.kind === "channel") {
      setMode("channel");
      setStreamId(t.streamId);
      setTopic(t.topic);
    } else {
      setMode("dm");
      setRecipients(emailsOf(t.ids));
    }
    setPreview(null);
    setContent((c) => {
      const next = c.trim() ? `${c.trimEnd()}\n${request.text}` : request.text;
      saveDraftSoon(t, next);
      return next;
    });
    requestAnimationFrame(() => {
      const field = box.current;
      if (field) (field.focus(), field.setSelectionRange(field.value.length, field.value.length));
    });
  }, [request?.seq]);

  const subs = [...S.subs.values()].sort((a, b) => a.name.localeCompare(b.name));
  const channel = streamId ?? subs[0]?.stream_id ?? null;
  const topics = channel !== null ? [...(S.topics.get(channel)?.values() ?? [])].sort((a, b) => b.maxId - a.maxId).slice(0, 30) : [];

  const target = (): Target | string => {
    if (mode === "channel") {
      if (channel === null) return "Choose a channel.";
      return { kind: "channel", streamId: channel, topic: topic.trim() };
    }
    const { ids, unknown } = parseRecipients(recipients);
    if (unknown.length) return `Unknown recipient: ${unknown.join(", ")}`;
    if (!ids.length) return "Add at least one recipient.";
    return { kind: "dm", ids };
  };

  const typingParams = (t: Target) => (t.kind === "channel" ? { type: "stream", stream_id: t.streamId, topic: t.topic } : { type: "direct", to: t.ids });
  const stopTyping = () => {
    const state = typing.current;
    if (state.stop) clearTimeout(state.stop);
    if (!state.key) return;
    const params = JSON.parse(state.key);
    state.key = "";
    void api("POST", "/typing", { op: "stop", ...params }).catch(() => {});
  };
  const noteTyping = () => {
    const t = target();
    if (typeof t === "string" || (t.kind === "channel" && !t.topic)) return;
    const key = JSON.stringify(typingParams(t));
    const state = typing.current;
    if (state.key !== key || Date.now() - state.at > 10_000) {
      if (state.key && state.key !== key) stopTyping();
      state.key = key;
      state.at = Date.now();
      void api("POST", "/typing", { op: "start", ...typingParams(t) }).catch(() => {});
    }
    if (state.stop) clearTimeout(state.stop);
    state.stop = setTimeout(stopTyping, 5_000);
  };

  /** The server renders the Markdown exactly as it would the message (its HTML is sanitized). */
  const togglePreview = async () => {
    if (preview !== null) {
      setPreview(null);
      return requestAnimationFrame(() => box.current?.focus());
    }
    try {
      setPreview(content.trim() ? (await api("POST", "/messages/render", { content })).rendered : "");
      setError("");
    } catch (e) {
      setError(errorText(e));
    }
  };

  const send = async () => {
    const t = target();
    if (typeof t === "string") return setError(t);
    if (!content.trim()) return;
    setSending(true);
    stopTyping();
    try {
      if (t.kind === "channel") await api("POST", "/messages", { type: "stream", to: t.streamId, topic: t.topic, content });
      else await api("POST", "/messages", { type: "direct", to: t.ids, content });
      setContent("");
      setPreview(null);
      setError("");
      void saveDraftNow(t, "");
    } catch (e) {
      setError(errorText(e));
    } finally {
      setSending(false);
      box.current?.focus();
    }
  };

  return (
    <form
      class="compose"
      data-version={version}
      onDragOver={(e) => e.dataTransfer?.types.includes("Files") && e.preventDefault()}
      onDrop={(e) => {
        const files = Array.from(e.dataTransfer?.files ?? []);
        if (!files.length) return;
        e.preventDefault();
        for (const file of files) pickFile.current?.(file);
      }} onSubmit={(e) => (e.preventDefault(), void send())} aria-label="Compose a message">
      <div class="compose-to">
        <select aria-label="Send to" value={mode} onChange={(e) => setMode(e.currentTarget.value as "channel" | "dm")}>
          <option value="channel">Channel</option>
          <option value="dm">Direct message</option>
        </select>
        {mode === "channel" ? (
          <>
            <select name="channel" aria-label="Channel" value={channel ?? ""} onChange={(e) => setStreamId(Number(e.currentTarget.value))}>
              {subs.map((s) => <option value={s.stream_id} key={s.stream_id}>#{s.name}</option>)}
            </select>
            <input name="topic" aria-label="Topic" placeholder="Topic" list="topic-options" value={topic} maxLength={60} onInput={(e) => setTopic(e.currentTarget.value)} />
            <datalist id="topic-options">{topics.map((t) => <option value={t.name} key={t.name} />)}</datalist>
          </>
        ) : (
          <>
            <input name="recipients" aria-label="Recipients" placeholder="E-mail addresses or names, comma-separated" list="people-options" value={recipients} onInput={(e) => setRecipients(e.currentTarget.value)} />
            <datalist id="people-options">{[...S.users.values()].filter((u) => u.is_active !== false).map((u) => <option value={u.email} key={u.user_id}>{userName(u.user_id)}</option>)}</datalist>
          </>
        )}
      </div>
      <div class="compose-body">
        {completion && <CompletionList completion={completion} selected={selected} onPick={pick} />}
        <textarea
          ref={box}
          name="content"
          aria-label="Message"
          {...comboboxAttributes(completion, selected)}
          placeholder="Write a message (Enter sends, Shift+Enter for a new line)"
          value={content}
          onInput={(e) => {
            setContent(e.currentTarget.value);
            suggest(e.currentTarget);
            const t = target();
            if (typeof t !== "string") saveDraftSoon(t, e.currentTarget.value);
            noteTyping();
          }}
          hidden={preview !== null}
          onPaste={(e) => {
            const files = Array.from(e.clipboardData?.files ?? []);
            if (!files.length) return;
            e.preventDefault();
            for (const file of files) pickFile.current?.(file);
          }}
          onBlur={() => (stopTyping(), setCompletion(null))}
          onKeyDown={(e) => {
            if (completion && !e.isComposing) {
              const count = completion.items.length;
              if (e.key === "ArrowDown" || e.key === "ArrowUp") {
                e.preventDefault();
                return setSelected((selected + (e.key === "ArrowDown" ? 1 : count - 1)) % count);
              }
              if (e.key === "Tab" || (e.key === "Enter" && !e.shiftKey)) {
                e.preventDefault();
                return pick(completion.items[selected] ?? completion.items[0]);
              }
              if (e.key === "Escape") {
                e.preventDefault();
                return setCompletion(null);
              }
            }
            if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
              e.preventDefault();
              if (!sending) void send();
            }
          }}
        />
        {preview !== null && <div class="compose-preview rendered" aria-label="Preview" dangerouslySetInnerHTML={{ __html: preview || "<p><em>Nothing to preview.</em></p>" }} />}
        <div class="compose-actions">
          <button type="button" class="preview-toggle" aria-pressed={preview !== null} onClick={() => void togglePreview()}>{preview === null ? "Preview" : "Edit"}</button>
          <Uploader pickRef={pickFile} onUploaded={(link) => setContent((c) => {
            const next = c && !c.endsWith("\n") ? `${c}\n${link}` : `${c}${link}`;
            const t = target();
            if (typeof t !== "string") saveDraftSoon(t, next);
            return next;
          })} onError={setError} />
          <button type="submit" class="primary" disabled={sending}>Send</button>
        </div>
      </div>
      {error && <p class="error compose-error" role="alert">{error}</p>}
    </form>
  );
}
