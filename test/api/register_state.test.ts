import { describe, expect, test } from "bun:test";
import { REGISTER_STATE_PARTS } from "../../src/views/register_state";

describe("register's state parts", () => {
  test("each part is listed once, and names what keeps it current", () => {
    const names = REGISTER_STATE_PARTS.map((part) => part.name);
    expect(new Set(names).size).toBe(names.length);
    for (const part of REGISTER_STATE_PARTS) {
      if (typeof part.when !== "function") expect(part.when.length).toBeGreaterThan(0);
    }
  });
});
