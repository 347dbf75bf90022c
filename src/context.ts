import type { FailureLimiter } from "./lib/ratelimit";
import type { Store } from "./store/db";
import type { EventHub } from "./events/hub";
import type { QueueManager } from "./events/queues";
import type { BackupSchedule, BackupScheduleConfig } from "./backup/schedule";
import type { Mailer } from "./lib/mailer";

/**
 * The records routes hand from a read to a response (the caller, an upload, an
 * invitation, a group setting): named here so that no route imports the store, not
 * even for a type.
 */
export type { UserRecord } from "./store/users";
export type { AttachmentRecord } from "./store/uploads";
export type { InviteRecord } from "./store/invites";
export type { GroupSettingValue } from "./store/user_groups";

export interface ServerConfig {
  dataDir: string;
  host: string;
  port: number;
  /** Public address from --external-url / HEARTH_EXTERNAL_URL, if given. */
  externalUrl: string | null;
  /**
   * Whether outgoing-webhook bots may call loopback and private-network addresses
   * (HEARTH_OUTGOING_WEBHOOKS_TO_PRIVATE_NETWORKS=allow, read at start when not given).
   */
  outgoingWebhooksToPrivateNetworks?: boolean;
  /** Reverse proxies whose X-Forwarded-For is believed (HEARTH_TRUSTED_PROXIES; default loopback). See src/http/client_address.ts. */
  trustedProxies?: string[];
  /** Idle time after which a browser session expires (serve --session-idle, HEARTH_SESSION_IDLE; default 14 days). */
  sessionIdleMs?: number;
  /** Scheduled backups (serve --backup-every …), if asked for. */
  backup?: BackupScheduleConfig | null;
  /** Outgoing mail server (serve --smtp-url / HEARTH_SMTP_URL; see src/lib/mailer.ts); read at start when not given. */
  smtpUrl?: string | null;
  /** The From of every email (HEARTH_EMAIL_FROM); default `Hearth <noreply@host of the realm URL>`. */
  emailFrom?: string | null;
  /** Email invitations an organization may send per 24 hours (HEARTH_INVITES_PER_DAY; Zulip's default 3,000); read at start when not given. */
  invitesPerDay?: number;
  /** The largest upload in MiB (HEARTH_MAX_UPLOAD_MIB; Zulip's MAX_FILE_UPLOAD_SIZE, default 25); read at start when not given. */
  maxUploadMib?: number;
}

/** Outgoing mail (src/actions/email.ts). */
export interface EmailService {
  /** The SMTP connection; null when none is configured (emails are then not queued). */
  mailer: Mailer | null;
  /** Wakes the outbox worker; a no-op until the server starts it. */
  wake(): void;
}

/** Everything a request handler or action may use; one per running server. */
export interface Hearth {
  store: Store;
  config: ServerConfig;
  events: EventHub;
  /** The event queues of GET /events (attached to `events` as a sink). */
  queues: QueueManager;
  /** Scheduled backups, when configured (the admin page shows their last result). */
  backups: BackupSchedule | null;
  email: EmailService;
  limits: {
    loginByUser: FailureLimiter;
    loginByIp: FailureLimiter;
  };
  /** The realm's public URL without trailing slash, e.g. `http://127.0.0.1:9991`. */
  realmUrl(): string;
  /** Host part of the realm URL, used in placeholder emails and bot addresses. */
  realmHost(): string;
}
