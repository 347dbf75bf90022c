import { removeStaleWork, workPath } from "../lib/archives";
import { copyFileSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, rmdirSync, rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { Store } from "../store/db";
import { openStoreFormat } from "../store/format";
import { conversationKey, recipientIdFor, type MessageRecord, type Reaction } from "../store/messages";
import { insertMessagesInBulk, reserveIds, type BulkMessage } from "../store/bulk_messages";
import { getChannel, putChannel } from "../store/channels";
import { getUser, putUser } from "../store/users";
import { putAttachment, uploadFilePath } from "../store/uploads";
import { putUploadedAvatar } from "../store/avatars";
import { putRealmEmoji, putRealmEmojiImage } from "../store/realm_emoji";
import { exportFile, isSafeRelativePath, readExportJson, unpackExport } from "./zulip_archive";
import { importRealmTables, type IdMaps } from "./zulip_import_realm";
import { fromZulipFlags, messageFileName, RecipientType, TransferError } from "./zulip_format";
import { Progress } from "./progress";

/**
 * `hearth import --format zulip`: a new organization from a Zulip realm export (the
 * `.tar.gz` of "Export organization" or `./manage.py export`).
 *
 * Everything is built in a folder beside the target and renamed into place at the
 * end, so a failure or a kill leaves no half-imported data folder; the target must be
 * absent or empty. The organization's tables go in one transaction, then the
 * messages in transactions of a few files each, so memory stays flat in the message
 * count. Messages keep Zulip's rendered HTML; every index a sent message gets
 * (narrows, unread counts, search) is written by the store's bulk insert
 * (insertMessagesInBulk: the rows a send writes, unread rows in runs).
 */

export interface ImportSummary {
  users: number;
  channels: number;
  messages: number;
  reactions: number;
  uploads: number;
  zulipVersion: string;
  seconds: number;
}

export async function importZulip(options: { archive: string; dataDir: string; progress?: Progress }): Promise<ImportSummary> {
  const dataDir = resolve(options.dataDir);
  if (existsSync(dataDir) && (!lstatSync(dataDir).isDirectory() || readdirSync(dataDir).length > 0)) {
    throw new TransferError(`Refusing to import into ${dataDir}: it is not an empty folder.`);
  }
  const parent = dirname(dataDir);
  if (!existsSync(parent)) throw new TransferError(`The folder ${parent} does not exist.`);
  removeStaleWork(dataDir, "importing");
  const staging = workPath(dataDir, "importing");
  const progress = options.progress ?? new Progress("Importing");
  mkdirSync(join(staging, "unpacked"), { recursive: true, mode: 0o700 });
  try {
    progress.phase("unpack");
    const root = await unpackExport(resolve(options.archive), join(staging, "unpacked"));
    const migration = readExportJson(root, "migration_status.json");
    const zulipVersion = typeof migration?.zulip_version === "string" ? migration.zulip_version : "unknown";
    const realmData = readExportJson(root, "realm.json")!;
    const target = join(staging, "data");
    mkdirSync(target, { mode: 0o700 });
    progress.phase("open store");
    const store = new Store(target);
    let summary: Omit<ImportSummary, "seconds">;
    try {
      await openStoreFormat(store);
      progress.phase("realm tables");
      const maps = await store.commit(() => importRealmTables(store, realmData));
      progress.phase("avatars and emoji");
      await store.commit(() => importFiles(store, root, maps, realmData));
      const reactions = reactionsByMessage(realmData, maps);
      const attachments = readExportJson(root, "attachment.json", false)?.zerver_attachment ?? [];
      const attachedMessages = new Set<number>(attachments.flatMap((a: any) => (Array.isArray(a.messages) ? a.messages : [])));
      const messageIds = new Map<number, number>();
      progress.phase("messages");
      const counts = await importMessages(store, root, maps, reactions, attachedMessages, messageIds, progress);
      progress.phase("uploads");
      const uploads = await importUploads(store, root, maps, attachments, messageIds);
      summary = {
        users: maps.userCount,
        channels: maps.channels.size,
        messages: counts.messages,
        reactions: counts.reactions,
        uploads,
        zulipVersion,
      };
    } finally {
      progress.phase("close store");
      await store.close();
    }
    progress.phase("rename, remove work folder");
    if (existsSync(dataDir)) rmdirSync(dataDir); // empty, checked above
    renameSync(target, dataDir);
    progress.finish();
    progress.phase("");
    return { ...summary, seconds: progress.seconds };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

type Row = Record<string, any>;

/** Reactions grouped by Zulip message ID; a custom emoji's code is its new ID. */
function reactionsByMessage(data: Row, maps: IdMaps): Map<number, Reaction[]> {
  const out = new Map<number, Reaction[]>();
  for (const r of Array.isArray(data.zerver_reaction) ? data.zerver_reaction : []) {
    const userId = maps.users.get(r.user_profile);
    if (userId === undefined) continue;
    let code = String(r.emoji_code);
    if (r.reaction_type === "realm_emoji") {
      const id = maps.emoji.get(Number(code));
      if (id === undefined) continue;
      code = String(id);
    }
    const list = out.get(r.message) ?? [];
    list.push({ emoji_name: String(r.emoji_name), emoji_code: code, reaction_type: r.reaction_type ?? "unicode_emoji", user_id: userId });
    out.set(r.message, list);
  }
  return out;
}

/**
 * Messages per transaction: large enough that the commit and the unread runs
 * (one record per user for up to 64 of a commit's messages) are spread over many
 * messages, small enough that what a commit holds stays a few megabytes.
 */
const MESSAGES_PER_COMMIT = 5000;

/**
 * `messages-000001.json`, `…2`, … until the first missing number (as Zulip reads them),
 * in transactions of about MESSAGES_PER_COMMIT messages, in ascending Zulip IDs.
 */
async function importMessages(store: Store, root: string, maps: IdMaps, reactions: Map<number, Reaction[]>, attached: Set<number>, messageIds: Map<number, number>, progress: Progress) {
  let messages = 0;
  let reactionCount = 0;
  const channelSpan = new Map<number, { first: number; lastAt: number }>();
  const systemBots = new Set([...maps.users.values()].filter((id) => getUser(store, id)?.is_system_bot === true));
  const recipientIds = new Map<string, number>();
  let commits = 0;
  let pending: { zulipId: number; message: Omit<MessageRecord, "id" | "recipient_id">; key: string; flags: Map<number, number> }[] = [];
  const flush = async () => {
    const batch = pending;
    pending = [];
    await store.commit(() => {
      let id = reserveIds(store, "message", batch.length);
      const bulk: BulkMessage[] = [];
      for (const p of batch) {
        let recipientId = recipientIds.get(p.key);
        if (recipientId === undefined) recipientIds.set(p.key, (recipientId = recipientIdFor(store, p.key)));
        const m = { ...p.message, id: id++, recipient_id: recipientId } as MessageRecord;
        bulk.push({ message: m, flags: p.flags });
        if (attached.has(p.zulipId)) messageIds.set(p.zulipId, m.id);
        if (m.type === "stream") {
          const span = channelSpan.get(m.channel_id!);
          channelSpan.set(m.channel_id!, { first: span?.first ?? m.id, lastAt: m.timestamp });
        }
      }
      insertMessagesInBulk(store, bulk);
    });
    progress.update(messages);
    // Bun collects the parsed files' garbage late: the process grew with the message
    // count without a collection every few commits, and one after each cost too much
    // CPU (docs/benchmarks.md).
    if (++commits % 4 === 0) Bun.gc(true);
  };
  for (let n = 1; existsSync(join(root, messageFileName(n))); n++) {
    const file = readExportJson(root, messageFileName(n))!;
    const rowsOf = new Map<number, Map<number, number>>();
    for (const um of Array.isArray(file.zerver_usermessage) ? file.zerver_usermessage : []) {
      const userId = maps.users.get(um.user_profile);
      if (userId === undefined) continue;
      let flags = rowsOf.get(um.message);
      if (!flags) rowsOf.set(um.message, (flags = new Map()));
      flags.set(userId, fromZulipFlags(Number(um.flags_mask ?? um.flags ?? 0)));
    }
    const zulipMessages = (Array.isArray(file.zerver_message) ? file.zerver_message : []).sort((a: Row, b: Row) => a.id - b.id);
    for (const zm of zulipMessages) {
      const record = messageRecord(zm, maps);
      if (!record) continue;
      record.message.reactions = reactions.get(zm.id) ?? [];
      reactionCount += record.message.reactions.length;
      const flags = rowsOf.get(zm.id) ?? new Map<number, number>();
      if (!flags.has(record.message.sender_id) && !systemBots.has(record.message.sender_id)) flags.set(record.message.sender_id, 1);
      pending.push({ zulipId: zm.id, message: record.message, key: record.key, flags });
      messages++;
    }
    if (pending.length >= MESSAGES_PER_COMMIT) await flush();
  }
  if (pending.length > 0) await flush();
  await store.commit(() => {
    for (const [channelId, span] of channelSpan) {
      const channel = getChannel(store, channelId);
      if (channel) putChannel(store, { ...channel, first_message_id: span.first, last_message_at: span.lastAt });
    }
  });
  return { messages, reactions: reactionCount };
}

/** A message without its IDs (given at its commit), and the key of its conversation's recipient. */
function messageRecord(zm: Row, maps: IdMaps): { message: Omit<MessageRecord, "id" | "recipient_id">; key: string } | undefined {
  const senderId = maps.users.get(zm.sender);
  const recipient = maps.recipients.get(zm.recipient);
  if (senderId === undefined || !recipient) return undefined;
  let type: "stream" | "private";
  let channelId: number | null = null;
  let members: number[] | null = null;
  if (recipient.type === RecipientType.STREAM) {
    type = "stream";
    channelId = maps.channels.get(recipient.typeId) ?? null;
    if (channelId === null) return undefined;
  } else if (recipient.type === RecipientType.PERSONAL) {
    type = "private";
    const other = maps.users.get(recipient.typeId);
    if (other === undefined) return undefined;
    members = [...new Set([senderId, other])].sort((a, b) => a - b);
  } else {
    type = "private";
    members = [...new Set([senderId, ...(maps.huddleMembers.get(recipient.typeId) ?? [])])].sort((a, b) => a - b);
  }
  const content = String(zm.content ?? "");
  const key = type === "stream" ? `c:${channelId}` : `d:${conversationKey(members!)}`;
  let editHistory: MessageRecord["edit_history"] = [];
  if (typeof zm.edit_history === "string") {
    try {
      editHistory = (JSON.parse(zm.edit_history) as MessageRecord["edit_history"]).map((e) => ({ ...e, user_id: e.user_id == null ? null : (maps.users.get(e.user_id) ?? null), ...(e.prev_stream !== undefined ? { prev_stream: maps.channels.get(e.prev_stream) ?? e.prev_stream } : {}), ...(e.stream !== undefined ? { stream: maps.channels.get(e.stream) ?? e.stream } : {}) }));
    } catch {
      editHistory = [];
    }
  }
  const message = {
    sender_id: senderId,
    type,
    channel_id: channelId,
    topic: type === "stream" ? String(zm.subject ?? "") : "",
    dm_user_ids: members,
    content,
    rendered_content: typeof zm.rendered_content === "string" ? zm.rendered_content : `<p>${escapeHtml(content)}</p>`,
    timestamp: Math.floor(Number(zm.date_sent) || 0),
    client: "Zulip import",
    is_me_message: /^\/me /.test(content),
    has_link: Boolean(zm.has_link),
    has_image: Boolean(zm.has_image),
    has_attachment: Boolean(zm.has_attachment),
    reactions: [],
    submessages: [],
    edit_history: editHistory,
    last_edit_timestamp: zm.last_edit_time != null ? Math.floor(zm.last_edit_time) : null,
    last_moved_timestamp: null,
  };
  return { message, key };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Uploaded files under the same path_id (message links stay valid), owned by the mapped user. */
async function importUploads(store: Store, root: string, maps: IdMaps, attachments: Row[], messageIds: Map<number, number>): Promise<number> {
  const records: Row[] = readExportJson(root, "uploads/records.json", false) ?? [];
  const fileOf = new Map<string, string>();
  for (const r of records) {
    const file = exportFile(root, "uploads", r.path);
    if (file && typeof r.s3_path === "string") fileOf.set(r.s3_path, file);
  }
  let count = 0;
  const written: Parameters<typeof putAttachment>[1][] = [];
  for (const a of attachments) {
    const source = fileOf.get(a.path_id);
    const ownerId = maps.users.get(a.owner);
    if (!source || ownerId === undefined || typeof a.path_id !== "string" || !isSafeRelativePath(a.path_id)) continue;
    const target = uploadFilePath(store, a.path_id);
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    copyFileSync(source, target);
    written.push({
      id: 0,
      owner_id: ownerId,
      path_id: a.path_id,
      name: String(a.file_name ?? basename(a.path_id)),
      size: lstatSync(target).size,
      content_type: typeof a.content_type === "string" ? a.content_type : "application/octet-stream",
      create_time: Math.floor(Number(a.create_time) || Date.now() / 1000),
      message_ids: (Array.isArray(a.messages) ? a.messages : []).map((id: number) => messageIds.get(id)).filter((id: number | undefined): id is number => id !== undefined).sort((x: number, y: number) => x - y),
    });
    count++;
  }
  await store.commit(() => {
    for (const a of written) putAttachment(store, { ...a, id: store.nextId("attachment") });
  });
  return count;
}

/** Avatars (the `.original` image where there is one) and custom emoji images. */
function importFiles(store: Store, root: string, maps: IdMaps, data: Row): void {
  const avatars: Row[] = readExportJson(root, "avatars/records.json", false) ?? [];
  const byUser = new Map<number, Row>();
  for (const r of avatars) {
    const current = byUser.get(r.user_profile_id);
    if (!current || String(r.s3_path ?? r.path).endsWith(".original")) byUser.set(r.user_profile_id, r);
  }
  for (const [oldId, r] of byUser) {
    const userId = maps.users.get(oldId);
    const file = exportFile(root, "avatars", r.path);
    const user = userId === undefined ? undefined : getUser(store, userId);
    if (!file || !user) continue;
    putUploadedAvatar(store, user.id, { content_type: imageType(r.content_type, file), data: readFileSync(file) });
    putUser(store, { ...user, avatar_source: "U", avatar_version: user.avatar_version + 1 });
  }
  const emoji: Row[] = readExportJson(root, "emoji/records.json", false) ?? [];
  const realmEmoji = new Map<number, Row>();
  for (const e of Array.isArray(data.zerver_realmemoji) ? data.zerver_realmemoji : []) realmEmoji.set(e.id, e);
  const fileByName = new Map<string, string>();
  for (const r of emoji) {
    const file = exportFile(root, "emoji", r.path);
    // The plain image, or the original when that is all there is.
    if (file && (!fileByName.has(r.file_name) || !String(r.path).endsWith(".original"))) fileByName.set(r.file_name, file);
  }
  for (const e of realmEmoji.values()) {
    const file = fileByName.get(e.file_name);
    if (!file) continue;
    const id = store.nextId("realm_emoji");
    maps.emoji.set(e.id, id);
    const authorId = maps.users.get(e.author) ?? [...maps.users.values()][0];
    putRealmEmoji(store, { id, name: String(e.name), author_id: authorId, deactivated: Boolean(e.deactivated), content_type: imageType(null, file) });
    putRealmEmojiImage(store, id, readFileSync(file));
  }
}

/** A content type for an image: the record's, else from the file's first bytes. */
function imageType(declared: unknown, file: string): string {
  if (typeof declared === "string" && declared.startsWith("image/")) return declared;
  const head = readFileSync(file).subarray(0, 12);
  if (head[0] === 0x89 && head[1] === 0x50) return "image/png";
  if (head[0] === 0x47 && head[1] === 0x49) return "image/gif";
  if (head[0] === 0xff && head[1] === 0xd8) return "image/jpeg";
  if (head.subarray(8, 12).toString() === "WEBP") return "image/webp";
  return "image/png";
}
