/**
 * Groups are cached by ID and name (src/store/user_groups.ts): every read must follow
 * putUserGroup, the one writer, and a write that rolls back must leave nothing behind.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../src/store/db";
import { getUserGroup, getUserGroupByName, putUserGroup, systemGroupId, type UserGroupRecord } from "../../src/store/user_groups";

const dir = mkdtempSync(join(tmpdir(), "hearth-user-group-cache-"));
const store = new Store(dir);
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const group = (id: number, name: string, extra: Partial<UserGroupRecord> = {}): UserGroupRecord =>
  ({ id, name, description: "", is_system_group: false, direct_subgroup_ids: [], creator_id: null, date_created: null, deactivated: false, settings: {}, ...extra }) as UserGroupRecord;

test("cached groups follow every write, renames and rollbacks", async () => {
  expect(getUserGroup(store, 40)).toBeUndefined();
  expect(getUserGroupByName(store, "Support")).toBeUndefined();
  await store.commit(() => putUserGroup(store, group(40, "Support")));
  expect(getUserGroup(store, 40)?.name).toBe("Support");
  expect(getUserGroupByName(store, "support")?.id).toBe(40);

  await store.commit(() => putUserGroup(store, group(40, "Helpers", { direct_subgroup_ids: [41] }), "Support"));
  expect(getUserGroup(store, 40)).toMatchObject({ name: "Helpers", direct_subgroup_ids: [41] });
  expect(getUserGroupByName(store, "Support")).toBeUndefined();
  expect(getUserGroupByName(store, "HELPERS")?.id).toBe(40);

  await store.commit(() => putUserGroup(store, group(40, "Helpers", { deactivated: true })));
  expect(getUserGroup(store, 40)?.deactivated).toBe(true);

  // Read inside the transaction that rolls back, then outside: the stored value wins.
  await expect(
    store.commit(() => {
      putUserGroup(store, group(40, "Renamed"), "Helpers");
      expect(getUserGroup(store, 40)?.name).toBe("Renamed");
      throw new Error("roll back");
    }),
  ).rejects.toThrow("roll back");
  expect(getUserGroup(store, 40)?.name).toBe("Helpers");
  expect(getUserGroupByName(store, "Renamed")).toBeUndefined();

  await store.commit(() => putUserGroup(store, group(42, "role:members", { is_system_group: true })));
  expect(systemGroupId(store, "role:members")).toBe(42);
  await store.commit(() => putUserGroup(store, group(43, "role:members", { is_system_group: true })));
  expect(systemGroupId(store, "role:members")).toBe(43);
});
