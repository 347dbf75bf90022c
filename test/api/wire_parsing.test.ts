import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseUrlEncoded } from "../../src/http/wire";
import { decodeParam, param, type Param } from "../../src/http/params";
import { startTestServer, type TestServer } from "../kit";

/** The plain reading of a form: split on "&", then on the first "=", each part decoded ("+" is a space). */
function referenceParse(text: string): Map<string, string> | "error" {
  const into = new Map<string, string>();
  const decode = (t: string) => decodeURIComponent(t.replace(/\+/g, " "));
  try {
    for (const pair of text.split("&")) {
      if (pair === "") continue;
      const eq = pair.indexOf("=");
      into.set(decode(eq === -1 ? pair : pair.slice(0, eq)), eq === -1 ? "" : decode(pair.slice(eq + 1)));
    }
  } catch {
    return "error";
  }
  return into;
}

function parsed(text: string): Map<string, string> | "error" {
  const into = new Map<string, string>();
  try {
    parseUrlEncoded(text, into);
  } catch {
    return "error";
  }
  return into;
}

/** A random string of the pieces forms are made of, malformed encodings included. */
function randomForm(seed: number): string {
  const pieces = ["a", "b", "to", "=", "=", "&", "&", "+", "%20", "%2B", "%26", "%3D", "%", "%E2%9C%93", "%FF", "x=1", "", "é"];
  let x = seed * 2654435761 + 1;
  const next = () => ((x = (x * 1103515245 + 12345) % 2147483648), x);
  return Array.from({ length: next() % 14 }, () => pieces[next() % pieces.length]).join("");
}

describe("form parsing in one scan", () => {
  test("gives the pairs the plain split-and-decode reading gives, or its error, on random forms", () => {
    const fixed = ["", "&", "&&a=1&&", "a", "a=", "=", "==", "a==b", "a=1&a=2", "a=1&b", "b&a=1", "a+b=c+d", "%3D=%26", "a=%", "x=%E2%9C%93&y=%FF"];
    for (const text of [...fixed, ...Array.from({ length: 5000 }, (_, i) => randomForm(i))]) {
      const want = referenceParse(text);
      const got = parsed(text);
      if (want === "error") expect([text, got]).toEqual([text, "error"]);
      else expect([text, got === "error" ? got : [...got]]).toEqual([text, [...want]]);
    }
  });

  test("a long run of names without values is read whole (the next '=' is looked for once, not per name)", () => {
    const into = new Map<string, string>();
    parseUrlEncoded("a&".repeat(200_000) + "b=1", into);
    expect(into.get("a")).toBe("");
    expect(into.get("b")).toBe("1");
  });
});

describe("JSON-or-text parameters", () => {
  const to = param.jsonOrString(param.string().schema) as unknown as Param;
  const slowDecode = (raw: string) => {
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  };
  test("decode as JSON.parse does, falling back to the text, with or without trying the parse", () => {
    const samples = ["", "bench", "Denmark", "newest", "oldest", "first_unread", "true", "false", "null", "nul", "tru", "fals", "true ", "false]", "null,", "nullx", "trueish", "12", "-3", "1e5", "[1,2]", "[1,", '"x"', '"x', "{}", "{", " 7", "\t[3]", "\n{}", "\r1", "\u00a07", "\ufeff7", "\u20287", "é", "+1", ".5", "Infinity", "NaN", "'x'"];
    for (let c = 0; c < 0x300; c++) samples.push(String.fromCharCode(c) + "1", String.fromCharCode(c));
    for (const raw of samples) expect([raw, decodeParam("to", to, raw)]).toEqual([raw, slowDecode(raw)]);
  });
});

describe("answers given at once and after reading a body", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
    await s.createChannel("iago", "Denmark", ["iago"]);
  });
  afterAll(() => s.stop());
  const auth = () => "Basic " + Buffer.from(`${s.users.iago.email}:${s.users.iago.apiKey}`).toString("base64");
  const expectError = async (res: Response, status: number, code: string, msg?: string) => {
    const body = (await res.json()) as any;
    expect({ status: res.status, result: body.result, code: body.code }).toEqual({ status, result: "error", code });
    if (msg !== undefined) expect(body.msg).toBe(msg);
  };

  test("parameters from the query string (answered at once) and from a form body (read first) are both read", async () => {
    const query = (await (await fetch(`${s.url}/api/v1/users/me?foo=1`, { headers: { authorization: auth() } })).json()) as any;
    expect([query.result, query.ignored_parameters_unsupported]).toEqual(["success", ["foo"]]);
    const form = "type=stream&to=Denmark&topic=wire&content=" + encodeURIComponent("to=x & y+z %") + "&foo=%E2%9C%93";
    const sent = (await (await fetch(`${s.url}/api/v1/messages`, { method: "POST", headers: { authorization: auth(), "content-type": "application/x-www-form-urlencoded" }, body: form })).json()) as any;
    expect([sent.result, sent.msg, sent.ignored_parameters_unsupported]).toEqual(["success", "", ["foo"]]);
    const got = (await (await fetch(`${s.url}/api/v1/messages/${sent.id}?apply_markdown=false`, { headers: { authorization: auth() } })).json()) as any;
    expect(got.message.content).toBe("to=x & y+z %");
    const empty = await fetch(`${s.url}/api/v1/messages`, { method: "POST", headers: { authorization: auth(), "content-type": "application/x-www-form-urlencoded" }, body: "" });
    await expectError(empty, 400, "REQUEST_VARIABLE_MISSING", "Missing 'type' argument");
  });

  test("a GET's body, declared or chunked, is not read (Bun's server drops it), and the request is answered", async () => {
    const port = Number(new URL(s.url).port);
    const raw = (framing: string, body: string) =>
      new Promise<string>((resolve, reject) => {
        let text = "";
        const socket = connect(port, "127.0.0.1", () => {
          socket.write(`GET /api/v1/users/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth()}\r\nContent-Type: application/x-www-form-urlencoded\r\n${framing}Connection: close\r\n\r\n${body}`);
        });
        socket.on("data", (d) => (text += d.toString()));
        socket.on("end", () => resolve(text));
        socket.on("error", reject);
      });
    for (const answer of [await raw("Content-Length: 5\r\n", "foo=1"), await raw("Transfer-Encoding: chunked\r\n", "5\r\nfoo=1\r\n0\r\n\r\n")]) {
      expect(answer.startsWith("HTTP/1.1 200")).toBe(true);
      expect(answer).toContain('"result":"success"');
      expect(answer).not.toContain("ignored_parameters_unsupported");
    }
  });

  test("errors from the synchronous path and from the body's path are the same Zulip errors", async () => {
    const bad = "Basic " + Buffer.from(`${s.users.iago.email}:wrong`).toString("base64");
    await expectError(await fetch(`${s.url}/api/v1/users/me`, { headers: { authorization: bad } }), 401, "INVALID_API_KEY");
    await expectError(await fetch(`${s.url}/api/v1/users/me`, { method: "PATCH", headers: { authorization: bad }, body: "full_name=x" }), 401, "INVALID_API_KEY");
    const sync = await fetch(`${s.url}/api/v1/users/${s.users.hamlet.id}?include_custom_profile_fields=maybe`, { headers: { authorization: auth() } });
    await expectError(sync, 400, "BAD_REQUEST");
  });
});
