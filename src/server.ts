import { envNumber } from "./lib/env";
import { Elysia } from "elysia";
import { resolve } from "node:path";
import type { Hearth, ServerConfig } from "./context";
import { Store } from "./store/db";
import { EventHub } from "./events/hub";
import { QueueManager } from "./events/queues";
import { realmSetting, SERVER_LIMITS } from "./store/realm_settings";
import { FailureLimiter } from "./lib/ratelimit";
import { DataFolderLock } from "./lockfile";
import { ApiRoutes, errorResponse, jsonResponse } from "./http/route";
import { nativeRoutesOf, trailingSlashRetry } from "./http/native_routes";
import { ApiError } from "./errors";
import { getRealm } from "./store/realm";
import { serverRoutes } from "./api/server";
import { usersRoutes } from "./api/users";
import { personalRoutes } from "./api/personal";
import { profileFieldRoutes } from "./api/profile_fields";
import { userTopicRoutes } from "./api/user_topics";
import { draftRoutes } from "./api/drafts";
import { emojiRoutes } from "./api/emoji";
import { pushRoutes } from "./api/push";
import { realmRoutes } from "./api/realm";
import { navigationViewRoutes } from "./api/navigation_views";
import { linkifierRoutes } from "./api/linkifiers";
import { channelFolderRoutes } from "./api/channel_folders";
import { defaultChannelGroupRoutes } from "./api/default_channel_groups";
import { runRealmDeletionIfDue } from "./actions/realm";
import { avatarRoutes } from "./api/avatars";
import { ensureAvatarSalt, getAvatarSalt } from "./store/avatars";
import { staticAssetRoutes } from "./api/static";
import { ensureSystemGroups } from "./actions/user_groups";
import { ensureChannelEmailSecret } from "./actions/channels";
import { resumeOutgoingWebhookCalls, stopOutgoingWebhooks } from "./actions/outgoing_webhooks";
import { trustedProxiesFromEnv } from "./http/client_address";
import { channelsRoutes } from "./api/channels";
import { userGroupsRoutes } from "./api/user_groups";
import { messagesRoutes } from "./api/messages";
import { startRetentionJob } from "./actions/retention";
import { loadPendingUnreadIndex } from "./store/unread";
import { DEFAULT_MAIN_THREAD_BACKLOG, DEFAULT_UNREAD_ROWS_DEFERRAL, DEFAULT_WORKER_RETIRE_MS, startUnreadRowsJob, type UnreadRowsJob } from "./store/unread_rows";
import { startScheduledDeliveryJob } from "./actions/scheduled_messages";
import { scheduledMessagesRoutes } from "./api/scheduled_messages";
import { eventsRoutes, fastPollRoute } from "./api/events";
import { webhookRoutes } from "./api/webhooks";
import { settingsRoutes } from "./api/settings";
import { accountPageRoutes } from "./api/account_pages";
import { startMissedMessageEmailJob } from "./actions/missed_message_emails";
import { presenceRoutes } from "./api/presence";
import { uploadsRoutes } from "./api/uploads";
import { tusRoutes } from "./api/tus";
import { inviteRoutes, joinPageRoutes } from "./api/invites";
import { backupRoutes } from "./api/backups";
import { emailRoutes } from "./api/email";
import { BackupSchedule } from "./backup/schedule";
import { openStoreFormatWithBackup } from "./backup/before_upgrade";
import { parseInterval } from "./backup/schedule";
import { sessionRoutes } from "./api/sessions";
import { Mailer, parseSmtpUrl } from "./lib/mailer";
import { startEmailWorker } from "./actions/email_worker";
import { webClientRoutes } from "./api/web_client";

export interface RunningServer {
  h: Hearth;
  /** The background writer of deferred unread rows (src/store/unread_rows.ts). */
  unreadRows: UnreadRowsJob;
  /** `serve`'s start ends with this (src/lib/startup_pages.ts `settleStart`): the folder's pending rows written. */
  writeStartBacklog(): Promise<void>;
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** `http://host:port`, with brackets around an IPv6 host. */
export function listeningUrl(host: string, port: number): string {
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** Bodies up to 64 MiB, or a largest upload (sent whole by POST /user_uploads) and its multipart wrapping. */
function requestBodyLimit(config: ServerConfig): number {
  return Math.max(64, (config.maxUploadMib ?? SERVER_LIMITS.max_file_upload_size_mib) + 1) * 1024 * 1024;
}

export function createHearth(store: Store, config: ServerConfig): Hearth {
  config.outgoingWebhooksToPrivateNetworks ??= process.env.HEARTH_OUTGOING_WEBHOOKS_TO_PRIVATE_NETWORKS === "allow";
  config.trustedProxies ??= trustedProxiesFromEnv();
  config.sessionIdleMs ??= sessionIdleFromEnv();
  config.smtpUrl ??= process.env.HEARTH_SMTP_URL || null;
  config.emailFrom ??= process.env.HEARTH_EMAIL_FROM || null;
  config.invitesPerDay ??= envNumber("HEARTH_INVITES_PER_DAY", 3000);
  config.maxUploadMib ??= envNumber("HEARTH_MAX_UPLOAD_MIB", SERVER_LIMITS.max_file_upload_size_mib);
  let parsedHost = { url: "", host: "" };
  let trimmedUrl = { raw: "", url: "" };
  let listening = { host: "", port: -1, url: "" };
  const h: Hearth = {
    store,
    config,
    events: new EventHub(),
    backups: null,
    email: { mailer: config.smtpUrl ? new Mailer(parseSmtpUrl(config.smtpUrl)) : null, wake() {} },
    queues: new QueueManager(undefined, {
      emptyTopicDisplayName: () => String(realmSetting(getRealm(store)?.settings ?? {}, "empty_topic_display_name")),
    }),
    limits: {
      // Zulip's defaults: 5 failed logins per account per 30 minutes.
      loginByUser: new FailureLimiter(envNumber("HEARTH_LOGIN_FAILURES_PER_USER", 5), 1800),
      loginByIp: new FailureLimiter(envNumber("HEARTH_AUTH_FAILURES_PER_IP", 50), 1800),
    },
    realmUrl() {
      const external = config.externalUrl ?? getRealm(store)?.external_url ?? null;
      // The listening URL is built again only when the host or port changed (every GET /users/me asks).
      if (config.host !== listening.host || config.port !== listening.port) listening = { host: config.host, port: config.port, url: listeningUrl(config.host, config.port) };
      const raw = external ?? listening.url;
      // Asked for every avatar URL shown: trimmed again only when it changed.
      if (raw !== trimmedUrl.raw) trimmedUrl = { raw, url: raw.replace(/\/+$/, "") };
      return trimmedUrl.url;
    },
    realmHost() {
      // Asked for every user formatted: parse the URL only when it changed.
      const url = h.realmUrl();
      if (url !== parsedHost.url) parsedHost = { url, host: new URL(url).hostname };
      return parsedHost.host;
    },
  };
  h.events.attach(h.queues);
  return h;
}

/** HEARTH_SESSION_IDLE (`30m`, `12h`, `14d`), else undefined: the default (src/auth/session.ts). */
export function sessionIdleFromEnv(value = process.env.HEARTH_SESSION_IDLE): number | undefined {
  if (value === undefined || value === "") return undefined;
  const ms = parseInterval(value);
  if (ms === null) throw new Error(`Invalid HEARTH_SESSION_IDLE '${value}' (use e.g. 30m, 12h or 14d)`);
  return ms;
}

/** Assembles the HTTP application: every resource's routes plus JSON 404s. */
export function buildApp(h: Hearth) {
  const events = eventsRoutes(h);
  const resources = [
    ...avatarRoutes(h),
    ...emojiRoutes(h),
    ...uploadsRoutes(h),
    tusRoutes(h),
    serverRoutes(h),
    usersRoutes(h),
    personalRoutes(h),
    profileFieldRoutes(h),
    userTopicRoutes(h),
    draftRoutes(h),
    pushRoutes(h),
    realmRoutes(h),
    navigationViewRoutes(h),
    linkifierRoutes(h),
    channelFolderRoutes(h),
    defaultChannelGroupRoutes(h),
    staticAssetRoutes(h),
    channelsRoutes(h),
    userGroupsRoutes(h),
    messagesRoutes(h),
    scheduledMessagesRoutes(h),
    events,
    webhookRoutes(h),
    settingsRoutes(h),
    accountPageRoutes(h),
    presenceRoutes(h),
    inviteRoutes(h),
    backupRoutes(h),
    emailRoutes(h),
    joinPageRoutes(h),
    ...sessionRoutes(h),
    webClientRoutes(h),
  ];
  // Every API route without a wildcard is mounted on Bun's router (ApiRoutes.handlers):
  // the handler does its own authentication, parameters and errors, and Elysia's
  // per-request context around it was a large share of an authenticated GET /users/me,
  // while registering and compiling every route in Elysia was about a quarter of the
  // start (docs/benchmarks.md). GET /events, the request every client repeats after every
  // event, takes a shorter path still for the usual poll (fastPollRoute). Other
  // methods on those paths, wildcard routes, pages, files and 404s go through Elysia;
  // a path with a trailing slash is tried without it before a 404, as Elysia did.
  const native = nativeRoutesOf(resources);
  native["/api/v1/events"].GET = fastPollRoute(h, events.handlers.get("GET /api/v1/events")!);
  native["/json/events"].GET = fastPollRoute(h, events.handlers.get("GET /json/events")!, "session");
  const app = new Elysia({ serve: { routes: native } as any });
  const retryWithoutSlash = trailingSlashRetry(native);
  for (const routes of resources) {
    const plugin = routes instanceof ApiRoutes ? routes.app : routes;
    if (plugin) app.use(plugin);
  }
  return app
    .onError(({ code, error, request, server }) => {
      if (error instanceof ApiError) return errorResponse(error);
      if (code === "NOT_FOUND") return retryWithoutSlash(request, server ?? null) ?? jsonResponse({ result: "error", msg: "Not Found", code: "NOT_FOUND" }, 404);
      if (code === "PARSE" || code === "VALIDATION") {
        return jsonResponse({ result: "error", msg: "Malformed request", code: "BAD_REQUEST" }, 400);
      }
      return errorResponse(error);
    });
}

/**
 * Opens the data folder and starts listening. Port 0 picks a free port (tests).
 * Bodies are capped well above the largest form a client sends and the upload limit.
 * `prepare` runs on the store once it is open and upgraded, before anything else
 * reads it (`hearth serve` creates the first organization there: one store open, not two).
 */
export async function startServer(config: ServerConfig, prepare?: (store: Store) => Promise<void>): Promise<RunningServer> {
  const dataDir = resolve(config.dataDir);
  const lock = DataFolderLock.acquire(dataDir);
  // What has started so far: undone in reverse order if a later step fails, so a
  // failed start leaves no timer running, no store open and the folder unlocked.
  const started: (() => unknown)[] = [() => lock.release()];
  try {
    const store = new Store(dataDir);
    started.push(() => store.close());
    await openStoreFormatWithBackup(store, config.backup?.dir ?? `${dataDir}-backups`);
    await prepare?.(store);
    // Data folders initialised before these features existed get what they need now.
    if (!getAvatarSalt(store)) await store.commit(() => ensureAvatarSalt(store));
    if (getRealm(store)) {
      await ensureSystemGroups(store);
      await ensureChannelEmailSecret(store);
    }
    loadPendingUnreadIndex(store);
    const h = createHearth(store, { ...config, dataDir });
    // Queues saved by the last graceful shutdown come back before any client can poll.
    h.queues.load(dataDir);
    h.queues.startGc();
    started.push(() => h.queues.close(dataDir));
    // A deactivated organization's data goes once its deletion date passes.
    await runRealmDeletionIfDue(store);
    const deletionTimer = setInterval(() => void runRealmDeletionIfDue(store).catch((e) => console.error("Realm deletion failed:", e)), 3600_000);
    deletionTimer.unref();
    started.push(() => clearInterval(deletionTimer));
    const stopRetention = startRetentionJob(h);
    started.push(stopRetention);
    // Resolved here, in a module beside main.ts: in a compiled executable import.meta.url
    // is the bundle's (at the root of the embedded files), not each source file's, and
    // scripts/build.ts embeds the worker at the same path relative to that root.
    const unreadRowsWorker = new URL("./store/unread_rows_worker.ts", import.meta.url).href;
    const unreadRowsIntervalMs = envNumber("HEARTH_UNREAD_ROWS_INTERVAL_MS", 500);
    const unreadRows = startUnreadRowsJob(
      h.store,
      unreadRowsIntervalMs,
      unreadRowsWorker,
      {
        ...DEFAULT_UNREAD_ROWS_DEFERRAL,
        // Every run on the worker, however small (tests and benchmarks of the worker itself).
        mainThread: process.env.HEARTH_UNREAD_ROWS_ALWAYS_ON_WORKER === "1" ? { messages: 0, recipients: 0 } : DEFAULT_MAIN_THREAD_BACKLOG,
      },
      envNumber("HEARTH_UNREAD_ROWS_WORKER_RETIRE_MS", DEFAULT_WORKER_RETIRE_MS),
    );
    started.push(() => unreadRows.stop());
    // Messages and reminders that fell due while the server was down go out before it
    // serves, so a client's first GET /scheduled_messages no longer lists them.
    const scheduledDelivery = startScheduledDeliveryJob(h);
    started.push(() => scheduledDelivery.stop());
    await scheduledDelivery.firstRun;
    // Emails queued before a stop or a crash go out as soon as the server runs.
    const emailWorker = startEmailWorker(h);
    started.push(() => emailWorker.stop());
    // Before listening, with the other jobs: a backup folder that cannot be made fails
    // the start here, where what started is undone, not after the port is bound.
    const backups = config.backup ? new BackupSchedule(config.backup, { dataDir, store }) : null;
    h.backups = backups;
    backups?.start();
    started.push(() => backups?.stop());
    const missedMessageEmails = startMissedMessageEmailJob(h);
    started.push(() => missedMessageEmails.stop());
    const app = buildApp(h);
    // Plugins that set up asynchronously (the static files) add their routes when
    // they resolve; listening before that would answer 404 for them.
    await app.modules;
    try {
      // Elysia turns SO_REUSEPORT on, which lets a second server bind the same port and
      // silently take half the connections; a port in use must be an error instead.
      app.listen({ hostname: config.host, port: config.port, maxRequestBodySize: requestBodyLimit(config), reusePort: false });
    } catch (e: any) {
      if (e?.code === "EADDRINUSE" || /in use/i.test(String(e?.message))) {
        throw new Error(`Port ${config.port} on ${config.host} is already in use.`);
      }
      throw e;
    }
    const server = app.server!;
    started.push(() => server.stop(true));
    // Port 0 asked for any free port: the realm URL is the one actually bound.
    h.config.port = server.port!;
    // Calls a crash or a stop left unmade go out now (a bot's server may call back at once).
    resumeOutgoingWebhookCalls(h);
    let stopped: Promise<void> | null = null;
    return {
      h,
      unreadRows,
      // A start is quiet: what the folder holds pending runs now, not after the quiet
      // time, unless the job's ticks are held off (tests, benchmarks of pending rows).
      writeStartBacklog: () => (unreadRowsIntervalMs <= DEFAULT_UNREAD_ROWS_DEFERRAL.quietMs ? unreadRows.drain() : Promise.resolve()),
      url: listeningUrl(config.host, server.port!),
      port: server.port!,
      stop() {
        stopped ??= (async () => {
          // Parked long-polls answer now (else stop would wait for their heartbeat);
          // the queues are written to the data folder for the next start.
          try {
            clearInterval(deletionTimer);
            await backups?.stop();
            await missedMessageEmails.stop();
            h.queues.close(null);
            await stopRetention();
            await scheduledDelivery.stop();
            await emailWorker.stop(); // a send under way finishes (and its row goes) first
            await unreadRows.stop();
            await server.stop(false); // stop accepting; in-flight requests finish
            await stopOutgoingWebhooks(h); // calls under way stop; they stay stored for the next start
            h.queues.close(dataDir); // may fail (a full disk): the store still closes
          } finally {
            await store.close();
            lock.release();
          }
        })();
        return stopped;
      },
    };
  } catch (e) {
    for (const undo of started.reverse()) await undo();
    throw e;
  }
}
