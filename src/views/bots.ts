import type { Hearth } from "../context";
import type { RealmBotJson } from "../schemas/register";
import { getChannel } from "../store/channels";
import { allUsers, BotType, getUser, type UserRecord } from "../store/users";
import { avatarUrl } from "./avatars";
import { apiEmail } from "./users";

/** A bot's services as realm_bots and realm_bot events carry them (Zulip's get_service_dicts_for_bot). */
export function botServicesView(bot: UserRecord): RealmBotJson["services"] {
  const service = bot.bot_type === BotType.OUTGOING_WEBHOOK ? bot.bot_service : undefined;
  return service ? [{ base_url: service.base_url, interface: service.interface, token: service.token }] : [];
}

/** A bot's defaults as the API names them: channels by name (null: none, or the channel is gone). */
export function botDefaultsView(h: Hearth, bot: UserRecord): { default_sending_stream: string | null; default_events_register_stream: string | null; default_all_public_streams: boolean } {
  const name = (id: number | null | undefined) => (id === null || id === undefined ? null : (getChannel(h.store, id)?.name ?? null));
  return {
    default_sending_stream: name(bot.bot_defaults?.sending_channel_id),
    default_events_register_stream: name(bot.bot_defaults?.events_register_channel_id),
    default_all_public_streams: bot.bot_defaults?.all_public_streams ?? false,
  };
}

/**
 * A bot as realm_bots and realm_bot/add carry it since FL 474: only what administering
 * it needs beyond its user object (name, address, avatar, type, owner and activity
 * are there; the key comes from GET /bots/{bot_id}/api_key).
 */
export function botView(h: Hearth, bot: UserRecord): RealmBotJson {
  return {
    user_id: bot.id,
    ...botDefaultsView(h, bot),
    services: botServicesView(bot),
  };
}

/** The API email of a bot's owner: the real address only where everyone may see it. */
export function botOwnerEmail(h: Hearth, bot: UserRecord): string | null {
  const owner = bot.bot_owner_id === null ? undefined : getUser(h.store, bot.bot_owner_id);
  return owner ? apiEmail(h, owner) : null;
}

/** `GET /bots`: Zulip lists the caller's own active bots here, administrators included (realm_bots has the rest). */
export function ownBotsView(h: Hearth, user: UserRecord): Record<string, unknown>[] {
  const bots: Record<string, unknown>[] = [];
  for (const u of allUsers(h.store)) {
    if (!u.is_bot || u.is_system_bot || !u.is_active || u.bot_owner_id !== user.id) continue;
    bots.push({
      username: u.email,
      full_name: u.full_name,
      api_key: u.api_key,
      avatar_url: avatarUrl(h, u),
      ...botDefaultsView(h, u),
      owner: botOwnerEmail(h, u),
      owner_id: u.bot_owner_id,
      bot_id: u.id,
      user_id: u.id,
      bot_type: u.bot_type,
      is_active: u.is_active,
    });
  }
  return bots;
}
