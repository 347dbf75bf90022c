/** `hearth init`, `create-user`, `reactivate-realm`: an organization and its accounts from the command line. */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { doInitRealm, doReactivateRealm, type InitOptions } from "../actions/realm";
import { doCreateStarterContent } from "../actions/new_organization";
import { createHearth, listeningUrl } from "../server";
import { Store } from "../store/db";
import { getRealm } from "../store/realm";
import { doCreateUser } from "../actions/create_user";
import { allUsers, Role, ROLES, BotType } from "../store/users";
import { UsageError, parseExternalUrl, parseFlags, printJson, required, withStore } from "./options";

/**
 * A new organization with its owner, then its starting channels and messages. The
 * second part runs after the first has committed: should it fail, the organization
 * still works, only without them (the owner can create channels).
 */
export async function createOrganization(store: Store, where: { host: string; port: number; externalUrl: string | null }, options: InitOptions) {
  const created = await doInitRealm(store, options);
  await doCreateStarterContent(createHearth(store, { dataDir: store.dataDir, ...where }), created.owner);
  return created;
}

export async function cmdInit(args: string[]) {
  const flags = parseFlags(args, {
    data: "string",
    "realm-name": "string",
    "owner-email": "string",
    "owner-password": "string",
    "owner-name": "string",
    "external-url": "string",
    json: "boolean",
  });
  const dataDir = resolve(required(flags, "data"));
  const externalUrl = parseExternalUrl(flags["external-url"] as string | undefined);
  const realmUrl = externalUrl ?? listeningUrl("127.0.0.1", 9991);
  const result = await withStore(dataDir, (store) =>
    createOrganization(store, { host: "127.0.0.1", port: 9991, externalUrl }, {
      realmName: required(flags, "realm-name"),
      ownerEmail: required(flags, "owner-email"),
      ownerPassword: required(flags, "owner-password"),
      ownerFullName: flags["owner-name"] as string | undefined,
      externalUrl,
    }),
  );
  const out = { email: result.owner.email, api_key: result.owner.api_key, user_id: result.owner.id, realm_url: realmUrl };
  if (flags.json) printJson(out);
  else console.log(`Created organization "${result.realm.name}" with owner ${out.email} (user ${out.user_id}).\nAPI key: ${out.api_key}`);
}

export async function cmdCreateUser(args: string[]) {
  const flags = parseFlags(args, {
    data: "string",
    email: "string",
    "full-name": "string",
    password: "string",
    role: "string",
    bot: "boolean",
    json: "boolean",
  });
  const dataDir = resolve(required(flags, "data"));
  const role = flags.role === undefined ? Role.MEMBER : Number(flags.role);
  if (!ROLES.includes(role)) throw new UsageError(`invalid role '${flags.role}' (use 100, 200, 300, 400 or 600)`);
  const email = required(flags, "email");
  const fullName = required(flags, "full-name");
  const password = flags.bot ? ((flags.password as string | undefined) ?? null) : required(flags, "password");
  const out = await withStore(dataDir, async (store) => {
    if (!getRealm(store)) throw new Error(`No organization in ${dataDir}: run 'hearth init' first.`);
    const h = createHearth(store, { dataDir, host: "127.0.0.1", port: 9991, externalUrl: null });
    const owner = [...allUsers(store)].find((u) => u.role === Role.OWNER && u.is_active && !u.is_bot);
    const user = await doCreateUser(h, {
      email,
      full_name: fullName,
      password,
      role: flags.bot ? Role.MEMBER : role,
      bot_type: flags.bot ? BotType.GENERIC : null,
      bot_owner_id: flags.bot ? (owner?.id ?? null) : null,
      pending_first_login: true,
    });
    return { email: user.email, api_key: user.api_key, user_id: user.id, realm_url: h.realmUrl() };
  });
  if (flags.json) printJson(out);
  else console.log(`Created ${flags.bot ? "bot" : "user"} ${out.email} (user ${out.user_id}).\nAPI key: ${out.api_key}`);
}

export async function cmdReactivateRealm(args: string[]) {
  const flags = parseFlags(args, { data: "string" });
  const dataDir = resolve(required(flags, "data"));
  if (!existsSync(dataDir)) throw new Error(`No data folder at ${dataDir}.`);
  const changed = await withStore(dataDir, (store) => doReactivateRealm(store));
  console.log(changed ? "The organization is active again." : "The organization was already active.");
}

