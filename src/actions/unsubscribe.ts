/**
 * Unsubscribing (Zulip's bulk_remove_subscriptions): who may remove whom, the
 * subscription rows turned inactive, and the events that tell the users who left and
 * the channel's other viewers.
 */
import type { Hearth } from "../context";
import { commit, type Transaction } from "../events/commit";
import { badRequest } from "../errors";
import { getUser, type UserRecord, isAdmin } from "../store/users";
import { getChannelByName, type ChannelRecord } from "../store/channels";
import { getSubscription, putSubscription } from "../store/subscriptions";
import { canRemoveSubscribers, channelDoesNotExist, channelViewerIds, hasMetadataAccess } from "../access/channels";
import { streamDeleteEvent } from "../views/channels";
import { aboutChannel } from "./channels_archived";
import { resolvePrincipals } from "./subscriptions";
export interface UnsubscribeResult {
  removed: string[];
  not_removed: string[];
}

/** DELETE /users/me/subscriptions. */
export async function checkUnsubscribe(
  h: Hearth,
  actor: UserRecord,
  names: string[],
  principalsInput?: (string | number)[],
): Promise<UnsubscribeResult> {
  return doUnsubscribe(h, actor, planUnsubscribe(h, actor, names, principalsInput));
}

interface UnsubscribePlan {
  principals: UserRecord[];
  channels: ChannelRecord[];
}

/** Every check of an unsubscribe, nothing written: afterwards only the writes remain. */
export function planUnsubscribe(h: Hearth, actor: UserRecord, names: string[], principalsInput?: (string | number)[]): UnsubscribePlan {
  const principals = principalsInput && principalsInput.length > 0 ? resolvePrincipals(h, actor, principalsInput) : [actor];
  const channels: ChannelRecord[] = [];
  for (const raw of names) {
    const channel = getChannelByName(h.store, raw);
    // Channels the caller may not see are reported as missing, so their names stay secret.
    if (!channel || (!hasMetadataAccess(h, actor, channel) && !isAdmin(actor))) {
      throw channelDoesNotExist(raw.trim());
    }
    if (!channels.some((c) => c.id === channel.id)) channels.push(channel);
  }
  for (const channel of channels) {
    for (const target of principals) {
      if (target.id === actor.id) continue;
      const ownsBot = target.is_bot && target.bot_owner_id === actor.id && hasMetadataAccess(h, actor, channel);
      if (!ownsBot && !canRemoveSubscribers(h, actor, channel)) throw badRequest("Insufficient permission");
    }
  }
  return { principals, channels };
}

type Unsubscribed = { channel: ChannelRecord; userIds: number[]; notIds: number[] }[];

async function doUnsubscribe(h: Hearth, actor: UserRecord, plan: UnsubscribePlan): Promise<UnsubscribeResult> {
  const removed = await commit(h, (tx) => {
    const written = writeUnsubscriptions(h, plan);
    notifyUnsubscribed(tx, h, written);
    return written;
  });
  return unsubscribeResult(removed);
}

/** The writes of an unsubscribe request; call inside `commit`. */
export function writeUnsubscriptions(h: Hearth, { principals, channels }: UnsubscribePlan): Unsubscribed {
  const done: Unsubscribed = [];
  for (const channel of channels) {
    const userIds: number[] = [];
    const notIds: number[] = [];
    for (const target of principals) {
      const sub = getSubscription(h.store, channel.id, target.id);
      if (!sub || !sub.active) {
        notIds.push(target.id);
        continue;
      }
      putSubscription(h.store, { ...sub, active: false });
      userIds.push(target.id);
    }
    done.push({ channel, userIds, notIds });
  }
  return done;
}

/** In an unsubscribe request's transaction, after its writes: its events. */
export function notifyUnsubscribed(tx: Transaction, h: Hearth, removed: Unsubscribed): void {
  for (const { channel, userIds } of removed) {
    if (userIds.length === 0) continue;
    for (const id of userIds) {
      tx.notify(aboutChannel(channel, { type: "subscription", op: "remove", subscriptions: [{ stream_id: channel.id, name: channel.name }] }), [id]);
    }
    const gone = new Set(userIds);
    const peers = channelViewerIds(h, channel).filter((id) => !gone.has(id));
    tx.notify(aboutChannel(channel, { type: "subscription", op: "peer_remove", stream_ids: [channel.id], user_ids: userIds }), peers);
    // Leaving a private channel can take it out of sight entirely.
    const lostSight = userIds.filter((id) => {
      const u = getUser(h.store, id);
      return u && !hasMetadataAccess(h, u, channel);
    });
    if (lostSight.length > 0) tx.notify(aboutChannel(channel, streamDeleteEvent(h, channel)), lostSight);
  }
}

/** An unsubscribe request's answer. */
export function unsubscribeResult(removed: Unsubscribed): UnsubscribeResult {
  const result: UnsubscribeResult = { removed: [], not_removed: [] };
  for (const { channel, userIds, notIds } of removed) {
    for (const _ of userIds) result.removed.push(channel.name);
    for (const _ of notIds) result.not_removed.push(channel.name);
  }
  return result;
}
