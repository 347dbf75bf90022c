import { Type as t } from "@sinclair/typebox";
import { clientAddress } from "../http/client_address";
import type { Hearth, UserRecord } from "../context";
import { badRequest, missingArgument, unauthorized } from "../errors";
import { eventsResponseBody, eventsResponseFields } from "../events/serialize";
import { ApiRoutes, authenticateEndpoint, errorResponse, SHARED_JSON_HEADERS, type Credentials } from "../http/route";
import type { SerializedFields } from "../lib/serialized_fields";
import { param, type ParamValues } from "../http/params";
import { channelById } from "../views/message_channels";
import { DEFAULT_IDLE_QUEUE_TIMEOUT_SECS, MAX_IDLE_QUEUE_TIMEOUT_SECS, MOBILE_IDLE_QUEUE_TIMEOUT_SECS } from "../events/queue_limits";
import type { EventQueue, QueueSettings } from "../events/event_queue";
import { parseCapabilities } from "../events/capabilities";
import { parseNarrow } from "../events/narrow";
import { fetchInitialState } from "../views/state_parts";
import { REGISTER_STATE_PARTS } from "../views/register_state";
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from "../version";
import { checkMayFollowAllPublicChannels } from "../access/users";

const registerParams = {
  apply_markdown: param.bool().default(false),
  // Default true when authenticated; an unauthenticated request may not ask for it.
  client_gravatar: param.bool().optional(),
  include_subscribers: param.jsonOrString(t.Union([t.Boolean(), t.Literal("partial")])).optional(),
  slim_presence: param.bool().default(false),
  presence_history_limit_days: param.int().optional(),
  event_types: param.json(t.Array(t.String())).optional(),
  fetch_event_types: param.json(t.Array(t.String())).optional(),
  // Both default to the bot's own defaults for a bot (PATCH /bots/{bot_id}), else false and [].
  all_public_streams: param.bool().optional(),
  client_capabilities: param.json(t.Record(t.String(), t.Unknown())).optional(),
  narrow: param.json(t.Array(t.Unknown())).optional(),
  // Seconds, or "mobile" (sent JSON-encoded by the mobile app; bare text accepted too).
  idle_queue_timeout: param.jsonOrString(t.Union([t.Integer({ minimum: 1 }), t.Literal("mobile")])).optional(),
  // Zulip's old `queue_lifespan_secs` spelling, still sent by some bots.
  queue_lifespan_secs: param.int().optional(),
};

type RegisterValues = ParamValues<typeof registerParams>;

/** The register parameters that shape a queue (also accepted by implicit registration in GET /events). */
type QueueParams = Pick<RegisterValues, "all_public_streams" | "narrow" | "apply_markdown" | "slim_presence"> &
  Partial<Pick<RegisterValues, "client_gravatar" | "event_types" | "client_capabilities" | "idle_queue_timeout" | "queue_lifespan_secs">>;

function queueSettings(h: Hearth, user: UserRecord, p: QueueParams, request: Request): QueueSettings {
  // Zulip's _default_all_public_streams and _default_narrow: a bot's own defaults fill in.
  const defaults = user.is_bot ? user.bot_defaults : undefined;
  const allPublicStreams = p.all_public_streams ?? defaults?.all_public_streams ?? false;
  let narrow = p.narrow ?? [];
  // By ID: the narrow outlives a rename of the channel.
  const defaultChannelId = defaults?.events_register_channel_id;
  if (narrow.length === 0 && defaultChannelId != null && channelById(h, defaultChannelId)) narrow = [["stream", defaultChannelId]];
  // Guests may not read every public channel's messages (Zulip's can_access_public_streams).
  if (allPublicStreams) checkMayFollowAllPublicChannels(user);
  let idle = DEFAULT_IDLE_QUEUE_TIMEOUT_SECS;
  if (p.idle_queue_timeout === "mobile") idle = MOBILE_IDLE_QUEUE_TIMEOUT_SECS;
  else if (typeof p.idle_queue_timeout === "number") idle = p.idle_queue_timeout;
  else if (typeof p.queue_lifespan_secs === "number" && p.queue_lifespan_secs > 0) idle = p.queue_lifespan_secs;
  return {
    userId: user.id,
    eventTypes: p.event_types ?? null,
    allPublicStreams,
    narrow: parseNarrow(narrow),
    capabilities: parseCapabilities(p.client_capabilities),
    applyMarkdown: p.apply_markdown,
    clientGravatar: p.client_gravatar ?? true,
    slimPresence: p.slim_presence,
    idleTimeoutSecs: Math.min(idle, MAX_IDLE_QUEUE_TIMEOUT_SECS),
    clientName: request.headers.get("user-agent") ?? "",
  };
}

/**
 * `POST /register`: creates the queue first, then reads the state, so an event
 * committed in between is both in the state and in the queue; clients apply events
 * idempotently (Zulip's contract), and none is lost.
 */
export function registerQueue(h: Hearth, user: UserRecord | null, p: RegisterValues, request: Request): Record<string, unknown> {
  if (!user) {
    if (p.client_gravatar === true) throw badRequest("Invalid 'client_gravatar' parameter for anonymous request");
    if (p.include_subscribers !== undefined && p.include_subscribers !== false) {
      throw badRequest("Invalid 'include_subscribers' parameter for anonymous request");
    }
    // Spectator access needs web-public channels, which this server does not offer.
    throw unauthorized();
  }
  const settings = queueSettings(h, user, p, request);
  const queue = h.queues.create(settings);
  const fetchTypes: string[] | null = p.fetch_event_types ?? p.event_types ?? null;
  const state = fetchInitialState(REGISTER_STATE_PARTS, {
    h,
    user,
    want: (type) => fetchTypes === null || fetchTypes.includes(type),
    capabilities: settings.capabilities,
    applyMarkdown: settings.applyMarkdown,
    clientGravatar: settings.clientGravatar,
    includeSubscribers: p.include_subscribers ?? false,
    slimPresence: settings.slimPresence,
    presenceHistoryLimitDays: p.presence_history_limit_days ?? null,
    narrow: settings.narrow,
    allPublicStreams: settings.allPublicStreams,
  });
  return {
    ...state,
    queue_id: queue.id,
    last_event_id: queue.lastEventId,
    zulip_version: ZULIP_VERSION,
    zulip_feature_level: ZULIP_FEATURE_LEVEL,
    service_feature_level: ZULIP_FEATURE_LEVEL,
    zulip_merge_base: ZULIP_MERGE_BASE,
    idle_queue_timeout_secs: settings.idleTimeoutSecs,
  };
}

export function eventsRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .post("/register", { auth: "optional", params: registerParams }, ({ user, params, request }) =>
      registerQueue(h, user, params, request),
    )
    .get(
      "/events",
      {
        params: {
          queue_id: param.string().optional(),
          last_event_id: param.int().optional(),
          dont_block: param.bool().default(false),
          // Implicit registration (no queue_id, dont_block) takes register's parameters.
          // All optional without defaults: every poll parses this list, so it stays cheap.
          event_types: param.json(t.Array(t.String())).optional(),
          all_public_streams: param.bool().optional(),
          narrow: param.json(t.Array(t.Unknown())).optional(),
          client_capabilities: param.json(t.Record(t.String(), t.Unknown())).optional(),
          apply_markdown: param.bool().optional(),
          client_gravatar: param.bool().optional(),
          slim_presence: param.bool().optional(),
          lifespan_secs: param.int().optional(),
        },
      },
      async ({ user, params, request, server }) => {
        let queueId = params.queue_id;
        if (queueId === undefined) {
          if (!params.dont_block) throw missingArgument("queue_id");
          const settings = queueSettings(
            h,
            user,
            {
              ...params,
              apply_markdown: params.apply_markdown ?? false,
              slim_presence: params.slim_presence ?? false,
              queue_lifespan_secs: params.lifespan_secs,
            },
            request,
          );
          queueId = h.queues.create(settings).id;
        }
        return pollQueue(h, user, queueId, params.last_event_id, params.dont_block, request, server, answerFields);
      },
    )
    .delete("/events", { params: { queue_id: param.string() } }, ({ user, params }) => {
      h.queues.remove(h.queues.access(params.queue_id, user.id));
      return {};
    });
}

/**
 * One poll of a queue the user owns, as both GET /events routes answer it: the answer
 * at once when events are waiting (or `dont_block`), else a promise of it. `finish`
 * turns the events into the route's answer inside that one promise: under a message
 * flood every client polls again after every event, and each promise layer per poll
 * (an async function, a `.then`) and each closure showed up in scripts/bench-events.ts,
 * so `finish` is a function of the events and the queue, made once per route.
 */
function pollQueue<T>(
  h: Hearth,
  user: UserRecord,
  queueId: string,
  lastEventId: number | undefined,
  dontBlock: boolean,
  request: Request,
  server: import("bun").Server<unknown> | null | undefined,
  finish: (events: QueuedEvents, queue: EventQueue) => T,
): T | Promise<T> {
  const queue = h.queues.access(queueId, user.id);
  const waiting = h.queues.poll(queue, lastEventId, dontBlock, request, finish);
  // Bun closes idle connections (10 s by default, 30 s as Elysia sets it up); a
  // parked poll must outlive the heartbeat.
  if (waiting instanceof Promise) server?.timeout(request, Math.ceil(h.queues.limits.heartbeatSecs) + 30);
  return waiting;
}

type QueuedEvents = Parameters<typeof eventsResponseFields>[0];

/** The general route's answer: fields its wrapper completes. */
const answerFields = (events: QueuedEvents, queue: EventQueue): SerializedFields => eventsResponseFields(events, queue.idJson, queue.sources);

/**
 * The fast route's answer, the whole body built in one string. A failure to build it
 * (none is expected: the events were serialized as they were delivered) is answered
 * as every route answers an error.
 */
export function pollResponse(events: QueuedEvents, queue: EventQueue): Response {
  try {
    return new Response(eventsResponseBody(events, queue.idJson, queue.sources), { headers: SHARED_JSON_HEADERS });
  } catch (error) {
    return errorResponse(error);
  }
}

/**
 * The integer written in `text` from `start` to `end` as JSON writes integers (an
 * optional minus, no leading zeros, at most 15 digits), as the general route parses
 * `last_event_id`; undefined for anything else.
 */
function jsonInteger(text: string, start: number, end: number): number | undefined {
  const negative = text.charCodeAt(start) === 45; // "-"
  const first = negative ? start + 1 : start;
  const digits = end - first;
  if (digits < 1 || digits > 15 || (digits > 1 && text.charCodeAt(first) === 48)) return undefined; // "0"
  let value = 0;
  for (let i = first; i < end; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return undefined;
    value = value * 10 + digit;
  }
  return negative ? -value : value;
}

/**
 * GET /events as every client repeats it after every event: `queue_id`,
 * `last_event_id` and `dont_block` in the query string, nothing else. Such a poll
 * skips the generic route's body reading and parameter tables (through them a poll
 * cost half again a bare Bun.serve answer: docs/benchmarks.md); any other
 * form of the request (another parameter, an encoded or unusual value) goes to
 * `general`, the route every endpoint uses, so both answer alike. `credentials` as
 * the general route takes them: the web app polls `/json/events` with its session.
 */
export function fastPollRoute(
  h: Hearth,
  general: (request: Request, server: import("bun").Server<unknown>) => Response | Promise<Response>,
  credentials: Credentials = "api",
) {
  return (request: Request, server: import("bun").Server<unknown>): Response | Promise<Response> => {
    const url = request.url;
    const q = url.indexOf("?");
    if (q === -1 || url.indexOf("#", q) !== -1) return general(request, server);
    let queueId: string | undefined;
    let lastEventId: number | undefined;
    let dontBlock: boolean | undefined;
    // Scanned in place, without splitting: this runs for every poll of every client.
    for (let at = q + 1; at < url.length; ) {
      let end = url.indexOf("&", at);
      if (end === -1) end = url.length;
      if (queueId === undefined && url.startsWith("queue_id=", at)) {
        queueId = url.slice(at + 9, end);
        if (queueId.indexOf("%") !== -1 || queueId.indexOf("+") !== -1) return general(request, server);
      } else if (lastEventId === undefined && url.startsWith("last_event_id=", at)) {
        lastEventId = jsonInteger(url, at + 14, end);
        if (lastEventId === undefined) return general(request, server);
      } else if (dontBlock === undefined && url.startsWith("dont_block=", at)) {
        if (url.startsWith("true", at + 11) && end === at + 15) dontBlock = true;
        else if (url.startsWith("false", at + 11) && end === at + 16) dontBlock = false;
        else return general(request, server);
      } else return general(request, server);
      at = end + 1;
    }
    if (queueId === undefined || request.body !== null) return general(request, server);
    try {
      const user = authenticateEndpoint(h, request, () => clientAddress(h, request, server), "required", false, credentials)!;
      // Bun's own answer to a failed route is an HTML error page: a failed answer is ours.
      return pollQueue(h, user, queueId, lastEventId, dontBlock ?? false, request, server, pollResponse);
    } catch (error) {
      return errorResponse(error, request);
    }
  };
}
