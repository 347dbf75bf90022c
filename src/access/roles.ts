import { mustBeAdmin, mustBeOwner } from "../errors";
import { isAdmin, isOwner, type UserRecord } from "../store/users";

/** Organization administrators (owners included) acting as themselves, never their bots. */
export function assertAdmin(user: UserRecord): void {
  if (!isAdmin(user) || user.is_bot) throw mustBeAdmin();
}

export function assertOwner(user: UserRecord): void {
  if (!isOwner(user) || user.is_bot) throw mustBeOwner();
}
