/** The realm's default channels, which new users join (Zulip's zerver/actions/default_streams.py). */
import type { Hearth } from "../context";
import { commit, type Transaction } from "../events/commit";
import { badRequest, mustBeAdmin } from "../errors";
import type { UserRecord } from "../store/users";
import { isDefaultChannel, setDefaultChannel } from "../store/default_channels";
import { accessChannel } from "../access/channels";
import { liveDefaultChannelIds } from "../views/channel_state";
import { isAdmin, activeNonGuestUserIds } from "../store/users";

/** Zulip's notify_default_streams: the whole list, to every active non-guest. */
export function notifyDefaultChannels(tx: Transaction, h: Hearth): void {
  tx.notify({ type: "default_streams", default_streams: liveDefaultChannelIds(h) }, activeNonGuestUserIds(h));
}

export async function checkSetDefaultChannel(h: Hearth, actor: UserRecord, channelId: number, isDefault: boolean): Promise<void> {
  if (!isAdmin(actor)) throw mustBeAdmin();
  const channel = accessChannel(h, actor, channelId);
  if (isDefault && channel.invite_only) throw badRequest("Private channels cannot be made default.");
  if (isDefaultChannel(h.store, channel.id) === isDefault) return;
  await commit(h, (tx) => {
    setDefaultChannel(h.store, channel.id, isDefault);
    notifyDefaultChannels(tx, h);
  });
}
