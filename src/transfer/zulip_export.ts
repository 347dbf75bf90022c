import { packArchive, removeStaleWork, syncFile, workPath } from "../lib/archives";
import { closeSync, copyFileSync, existsSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { Store } from "../store/db";
import { assertReadableFormat, storeFormatVersion } from "../store/format";
import { REALM_ID } from "../store/realm";
import { allMessages, messageCount, type MessageRecord } from "../store/messages";
import { messageRecipientFlags } from "../store/user_messages";
import { allAttachments } from "../store/uploads";
import { allRealmEmoji, getRealmEmojiImage } from "../store/realm_emoji";
import { getUploadedAvatar } from "../store/avatars";
import { allUsers } from "../store/users";
import { buildRealmTables, emojiFileName, Recipients } from "./zulip_export_tables";
import { DEFAULT_ZULIP_RELEASE, EXPORT_FOLDER, messageFileName, MESSAGES_PER_FILE, SUPPORTED_ZULIP_RELEASES, toZulipFlags, TransferError } from "./zulip_format";
import { Progress } from "./progress";

/**
 * `hearth export --format zulip`: the organization as a Zulip realm export, the
 * folder `./manage.py import` reads (packed as one .tar.gz with one top-level folder,
 * as Zulip's own exports are).
 *
 * Consistency: the store is first copied with LMDB's own compacting copy (a read
 * transaction: the running server's writers go on), and everything is read from that
 * copy, so the export is the organization as of one commit. Memory stays flat in the
 * message count: messages are read in ID order and written 1000 to a file; the
 * reactions they carry go to a scratch file streamed into realm.json at the end.
 * The archive is written under a temporary name beside the output and renamed once
 * complete: a failed or killed export leaves nothing under the name asked for.
 */

export interface ExportOptions {
  dataDir: string;
  outFile: string;
  /** The Zulip Server release the export is for (its major version must match the target's). */
  zulipRelease?: string;
  /** A migration_status.json captured on the target server, written instead of the generic one. */
  migrationStatusFile?: string;
  /** The running server's store (in-process callers); otherwise the folder's store is opened read-only. */
  store?: Store;
  progress?: Progress;
}

export interface ExportSummary {
  users: number;
  channels: number;
  messages: number;
  userMessages: number;
  reactions: number;
  uploads: number;
  seconds: number;
  zulipRelease: string;
}

export async function exportZulip(options: ExportOptions): Promise<ExportSummary> {
  const release = options.zulipRelease ?? DEFAULT_ZULIP_RELEASE;
  if (!(SUPPORTED_ZULIP_RELEASES as readonly string[]).includes(release)) {
    throw new TransferError(`Zulip release ${release} is not supported; use one of ${SUPPORTED_ZULIP_RELEASES.join(", ")}.`);
  }
  const migrationStatus = migrationStatusFor(release, options.migrationStatusFile);
  const dataDir = resolve(options.dataDir);
  const outFile = resolve(options.outFile);
  if (!existsSync(join(dataDir, "db", "data.mdb"))) throw new TransferError(`No Hearth data folder at ${dataDir} (no db/data.mdb).`);
  const outDir = dirname(outFile);
  if (!existsSync(outDir)) throw new TransferError(`The folder ${outDir} does not exist.`);
  removeStaleWork(outFile, "partial");
  const staging = workPath(outFile, "partial");
  const partialArchive = `${staging}.tar.gz`;
  const progress = options.progress ?? new Progress("Exporting");
  mkdirSync(join(staging, "db"), { recursive: true, mode: 0o700 });
  try {
    if (options.store) await options.store.snapshotTo(join(staging, "db"));
    else await Store.snapshotFolder(join(dataDir, "db"), join(staging, "db"));
    const snapshot = new Store(staging);
    const root = join(staging, EXPORT_FOLDER);
    mkdirSync(root, { mode: 0o700 });
    let summary: ExportSummary;
    try {
      assertReadableFormat(storeFormatVersion(snapshot), `The data folder ${dataDir}`);
      summary = writeExport(snapshot, dataDir, root, progress, release);
    } finally {
      await snapshot.close();
    }
    writeFileSync(join(root, "migration_status.json"), JSON.stringify(migrationStatus, null, 2));
    rmSync(join(staging, "db"), { recursive: true, force: true });
    await packArchive(partialArchive, staging, [EXPORT_FOLDER]);
    syncFile(partialArchive);
    renameSync(partialArchive, outFile);
    syncFile(outDir);
    progress.finish();
    return { ...summary, seconds: progress.seconds };
  } finally {
    rmSync(staging, { recursive: true, force: true });
    rmSync(partialArchive, { force: true });
  }
}

/**
 * Zulip's importer compares the export's major version with its own, and the
 * migrations of each app present on both sides; an app the export does not list is
 * only warned about. Hearth runs none of Zulip's migrations, so it lists none, and
 * the row fields follow the release's models instead. A file captured on the target
 * server (`--zulip-migration-status`) is used as it is.
 */
function migrationStatusFor(release: string, file: string | undefined): unknown {
  if (!file) return { migrations_by_app: {}, zulip_version: release };
  let parsed: any;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (error: any) {
    throw new TransferError(`Cannot read the migration status ${file}: ${error?.message ?? error}`);
  }
  if (typeof parsed?.zulip_version !== "string" || typeof parsed?.migrations_by_app !== "object") {
    throw new TransferError(`${file} is not a Zulip migration_status.json (it needs zulip_version and migrations_by_app).`);
  }
  if (parsed.zulip_version.split(".")[0] !== release.split(".")[0]) {
    throw new TransferError(`${file} is from Zulip ${parsed.zulip_version}, not a ${release.split(".")[0]}.x release.`);
  }
  return parsed;
}

function writeExport(store: Store, dataDir: string, root: string, progress: Progress, release: string): ExportSummary {
  const clients = new Map<string, number>();
  const clientId = (name: string) => {
    let id = clients.get(name);
    if (id === undefined) clients.set(name, (id = clients.size + 1));
    return id;
  };
  const recipients = new Recipients();
  const tables = buildRealmTables(store, recipients, clientId);
  const emojiNames = new Map([...allRealmEmoji(store)].map((e) => [e.id, e.name]));
  // UserMessage rows are the organization's users' (Zulip's system bots live in another realm).
  const realmUserIds = new Set([...allUsers(store)].filter((u) => !u.is_system_bot).map((u) => u.id));

  // Messages, a file per 1000, with their recipients' rows; reactions to a scratch file.
  const reactionsPath = join(root, ".reactions.jsonl");
  const reactionsFd = openSync(reactionsPath, "w", 0o600);
  const total = messageCount(store);
  let fileNumber = 0;
  let batch: MessageRecord[] = [];
  let messages = 0;
  let userMessages = 0;
  let reactions = 0;
  const flush = () => {
    if (batch.length === 0) return;
    const zerverMessage: unknown[] = [];
    const zerverUserMessage: unknown[] = [];
    for (const m of batch) {
      const recipient = messageRecipient(m, recipients);
      if (recipient === undefined) continue;
      zerverMessage.push(messageRow(m, recipient, clientId(m.client)));
      for (const [userId, bits] of messageRecipientFlags(store, m)) {
        if (!realmUserIds.has(userId)) continue;
        zerverUserMessage.push({ id: ++userMessages, user_profile: userId, message: m.id, flags_mask: toZulipFlags(bits, m.type === "private") });
      }
      for (const r of m.reactions) {
        // The importer asserts a custom emoji reaction names an emoji of the export, by its name.
        if (r.reaction_type === "realm_emoji" && emojiNames.get(Number(r.emoji_code)) !== r.emoji_name) continue;
        reactions++;
        writeSync(reactionsFd, JSON.stringify({ id: reactions, message: m.id, user_profile: r.user_id, emoji_name: r.emoji_name, emoji_code: r.emoji_code, reaction_type: r.reaction_type }) + "\n");
      }
      messages++;
    }
    writeFileSync(join(root, messageFileName(++fileNumber)), JSON.stringify({ zerver_message: zerverMessage, zerver_usermessage: zerverUserMessage }));
    batch = [];
    progress.update(messages, total);
    // As the import does: Bun collects each file's garbage late without it.
    if (fileNumber % 20 === 0) Bun.gc(true);
  };
  for (const m of allMessages(store)) {
    batch.push(m);
    if (batch.length >= MESSAGES_PER_FILE) flush();
  }
  flush();
  closeSync(reactionsFd);

  const huddles = [...recipients.huddles.values()];
  const subscriptions = tables.zerver_subscription as Record<string, unknown>[];
  for (const h of huddles) for (const userId of h.members) subscriptions.push({ id: subscriptions.length + 1, user_profile: userId, recipient: h.recipientId, active: true, is_user_active: true, color: "#c2c2c2", is_muted: false, pin_to_top: false, desktop_notifications: null, audible_notifications: null, push_notifications: null, email_notifications: null, wildcard_mentions_notify: null });
  const realmJson = {
    ...tables,
    zerver_huddle: huddles.map((h) => ({ id: h.huddleId, group_size: h.members.length, huddle_hash: `hearth-${h.members.join("-")}` })),
    zerver_recipient: recipients.rows,
    zerver_client: [...clients].map(([name, id]) => ({ id, name })),
    import_source: "hearth",
    sort_by_date: false,
  };
  writeRealmJson(join(root, "realm.json"), realmJson, reactionsPath);
  rmSync(reactionsPath);

  const uploads = writeUploads(store, dataDir, root);
  writeAvatars(store, root);
  writeEmoji(store, root);
  return {
    users: (tables.zerver_userprofile as unknown[]).length + (tables.zerver_userprofile_mirrordummy as unknown[]).length,
    channels: (tables.zerver_stream as unknown[]).length,
    messages,
    userMessages,
    reactions,
    uploads,
    seconds: 0,
    zulipRelease: release,
  };
}

/** A message's Zulip recipient: the channel's, the receiver's own for a 1:1 (one's own for a note to self), or the group conversation's. */
function messageRecipient(m: MessageRecord, recipients: Recipients): number | undefined {
  if (m.type === "stream") return recipients.stream.get(m.channel_id!);
  const members = m.dm_user_ids!;
  if (members.length <= 2) {
    const other = members.find((id) => id !== m.sender_id) ?? m.sender_id;
    return recipients.personal.get(other);
  }
  return recipients.huddleFor(members.join(","), members);
}

function messageRow(m: MessageRecord, recipient: number, client: number): Record<string, unknown> {
  return {
    id: m.id,
    sender: m.sender_id,
    recipient,
    realm: REALM_ID,
    sending_client: client,
    subject: m.type === "stream" ? m.topic : "",
    content: m.content,
    rendered_content: m.rendered_content,
    rendered_content_version: 1,
    date_sent: m.timestamp,
    last_edit_time: m.last_edit_timestamp,
    edit_history: editHistoryForZulip(m),
    has_attachment: m.has_attachment,
    has_image: m.has_image,
    has_link: m.has_link,
    is_channel_message: m.type === "stream",
    type: 1,
  };
}

/**
 * The edit history as Zulip's importer reads it: every entry's user_id is looked up in
 * its user map (a null one would stop the import), and an entry with `prev_content`
 * must carry its `prev_rendered_content` (one without is re-rendered, which an edit
 * entry cannot be). Entries without content (topic and channel moves) pass as they are.
 */
function editHistoryForZulip(m: MessageRecord): string | null {
  if (m.edit_history.length === 0) return null;
  return JSON.stringify(
    m.edit_history.map((entry) => {
      const out: Record<string, unknown> = { ...entry, user_id: entry.user_id ?? m.sender_id };
      if (out.prev_content !== undefined && typeof out.prev_rendered_content !== "string") {
        delete out.prev_content;
        delete out.prev_rendered_content_version;
      }
      return out;
    }),
  );
}

/** realm.json written key by key, with the reactions streamed in from their scratch file. */
function writeRealmJson(path: string, tables: Record<string, unknown>, reactionsPath: string): void {
  const fd = openSync(path, "w", 0o600);
  try {
    writeSync(fd, "{");
    for (const [key, value] of Object.entries(tables)) writeSync(fd, `${JSON.stringify(key)}:${JSON.stringify(value)},\n`);
    writeSync(fd, `"zerver_reaction":[`);
    let first = true;
    let rest = "";
    const readFd = openSync(reactionsPath, "r");
    const buffer = Buffer.alloc(1 << 20);
    try {
      for (let n = readSync(readFd, buffer, 0, buffer.length, null); n > 0; n = readSync(readFd, buffer, 0, buffer.length, null)) {
        const lines = (rest + buffer.toString("utf8", 0, n)).split("\n");
        rest = lines.pop()!;
        for (const line of lines) {
          if (line === "") continue;
          writeSync(fd, (first ? "" : ",\n") + line);
          first = false;
        }
      }
    } finally {
      closeSync(readFd);
    }
    writeSync(fd, "]}");
  } finally {
    closeSync(fd);
  }
}

/** Uploaded files as Zulip's `uploads/` (path = s3_path = path_id) and attachment.json. */
function writeUploads(store: Store, dataDir: string, root: string): number {
  const records: unknown[] = [];
  const attachments: unknown[] = [];
  const ownerEmail = new Map([...allUsers(store)].map((u) => [u.id, u.email]));
  for (const a of allAttachments(store)) {
    const uploadsDir = resolve(dataDir, "uploads");
    const source = resolve(uploadsDir, a.path_id);
    let isFile = false;
    try {
      // Only regular files inside the uploads folder: a planted link is not followed.
      isFile = source.startsWith(uploadsDir + sep) && lstatSync(source).isFile();
    } catch {
      isFile = false;
    }
    if (!isFile) continue; // named by the store but gone from disk: Zulip's importer needs the file
    const target = join(root, "uploads", a.path_id);
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    try {
      linkSync(source, target);
    } catch {
      copyFileSync(source, target);
    }
    records.push({ realm_id: REALM_ID, user_profile_id: a.owner_id, user_profile_email: ownerEmail.get(a.owner_id) ?? "", s3_path: a.path_id, path: a.path_id, size: a.size, last_modified: a.create_time, content_type: a.content_type });
    attachments.push({ id: a.id, file_name: a.name, path_id: a.path_id, owner: a.owner_id, realm: REALM_ID, create_time: a.create_time, size: a.size, content_type: a.content_type, is_realm_public: true, is_web_public: false, messages: a.message_ids, scheduled_messages: [] });
  }
  mkdirSync(join(root, "uploads"), { recursive: true, mode: 0o700 });
  writeFileSync(join(root, "uploads", "records.json"), JSON.stringify(records));
  writeFileSync(join(root, "attachment.json"), JSON.stringify({ zerver_attachment: attachments }));
  return records.length;
}

/** Uploaded avatars as `.original` images: the importer makes Zulip's sizes from them. */
function writeAvatars(store: Store, root: string): void {
  const records: unknown[] = [];
  mkdirSync(join(root, "avatars", String(REALM_ID)), { recursive: true, mode: 0o700 });
  for (const u of allUsers(store)) {
    if (u.avatar_source !== "U" || u.is_system_bot) continue;
    const avatar = getUploadedAvatar(store, u.id);
    if (!avatar) continue;
    const path = `${REALM_ID}/${u.id}-${u.avatar_version}.original`;
    writeFileSync(join(root, "avatars", path), avatar.data);
    records.push({ realm_id: REALM_ID, user_profile_id: u.id, user_profile_email: u.email, avatar_version: u.avatar_version, s3_path: path, path, size: avatar.data.length, last_modified: Math.floor(Date.now() / 1000), content_type: avatar.content_type, importer_should_thumbnail: true });
  }
  writeFileSync(join(root, "avatars", "records.json"), JSON.stringify(records));
}

/** Custom emoji images, named as the realm emoji rows' file_name. */
function writeEmoji(store: Store, root: string): void {
  const records: unknown[] = [];
  const dir = join(root, "emoji", String(REALM_ID), "emoji", "images");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const e of allRealmEmoji(store)) {
    const image = getRealmEmojiImage(store, e);
    if (!image) continue;
    const fileName = emojiFileName(e.id, e.content_type);
    const path = `${REALM_ID}/emoji/images/${fileName}`;
    writeFileSync(join(root, "emoji", path), image);
    records.push({ realm_id: REALM_ID, author: e.author_id, path, s3_path: path, file_name: fileName, name: e.name, deactivated: e.deactivated });
  }
  writeFileSync(join(root, "emoji", "records.json"), JSON.stringify(records));
}

