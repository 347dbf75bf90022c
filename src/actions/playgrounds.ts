import type { Hearth } from "../context";
import { commit, type Transaction } from "../events/commit";
import { assertAdmin } from "../access/roles";
import { badRequest } from "../errors";
import { activeUserIds, type UserRecord } from "../store/users";
import { getPlayground, putPlayground, removePlayground, type RealmPlayground } from "../store/playgrounds";
import { getPlaygrounds } from "../views/playgrounds";

function notifyPlaygrounds(tx: Transaction, h: Hearth): void {
  tx.notify({ type: "realm_playgrounds", realm_playgrounds: getPlaygrounds(h) }, activeUserIds(h));
}


/** FL 196: the template must be a URL with exactly the `{code}` variable. */
function checkTemplate(template: string): string {
  if (!/^https?:\/\//i.test(template)) throw badRequest("Invalid URL template.");
  const variables = [...template.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]);
  if (variables.length !== 1 || variables[0] !== "code") throw badRequest('"code" should be the only variable present in the URL template');
  return template;
}

export async function doAddPlayground(h: Hearth, user: UserRecord, input: Omit<RealmPlayground, "id">): Promise<number> {
  assertAdmin(user);
  const name = input.name.trim();
  const language = input.pygments_language.trim();
  if (name === "") throw badRequest("Name cannot be blank.");
  if (!/^[\w+#.-]+( [\w+#.-]+)*$/.test(language) || language.length > 40) throw badRequest("Invalid characters in pygments language");
  const template = checkTemplate(input.url_template);
  return commit(h, (tx) => {
    if (getPlaygrounds(h).some((p) => p.name === name && p.pygments_language === language)) {
      throw badRequest("Realm playground with this Realm, Pygments language and Name already exists.");
    }
    const playground: RealmPlayground = { id: h.store.nextId("playground"), name, pygments_language: language, url_template: template };
    putPlayground(h.store, playground);
    notifyPlaygrounds(tx, h);
    return playground.id;
  });
}

export async function doRemovePlayground(h: Hearth, user: UserRecord, id: number): Promise<void> {
  assertAdmin(user);
  await commit(h, (tx) => {
    if (!getPlayground(h.store, id)) throw badRequest("Invalid playground");
    removePlayground(h.store, id);
    notifyPlaygrounds(tx, h);
  });
}
