import { describe, expect, spyOn, test } from "bun:test";
import { linkProperties, renderMarkdown, type RenderContext } from "../../src/markdown";
import { htmlDiff } from "../../src/markdown/html_diff";

const ctx: RenderContext = {
  userById: (id) => (id === 5 ? { id: 5, full_name: "King Hamlet" } : id === 6 ? { id: 6, full_name: "King Hamlet" } : undefined),
  usersByName: (name) => (name.toLowerCase() === "king hamlet" ? [{ id: 5, full_name: "King Hamlet" }] : name === "Twin" ? [{ id: 8, full_name: "Twin" }, { id: 9, full_name: "Twin" }] : []),
  groupByName: (name) => (name === "support" ? { id: 3, name: "support" } : undefined),
  channelByName: (name) => (name.toLowerCase() === "denmark" ? { id: 9, name: "Denmark" } : name === "A>B" ? { id: 12, name: "A>B" } : undefined),
  linkifiers: [{ pattern: "#(?P<id>[0-9]+)", url_template: "https://github.com/zulip/zulip/issues/{id}" }],
};
const render = (s: string) => renderMarkdown(s, ctx);

describe("Zulip-flavoured Markdown", () => {
  test("paragraphs, line breaks, emphasis, inline code", () => {
    expect(render("hello **world** *it* `x<y`\nnext").html).toBe("<p>hello <strong>world</strong> <em>it</em> <code>x&lt;y</code><br>\nnext</p>");
  });

  test("user mentions by name, by name|id, silent; ambiguous names mention nobody", () => {
    const r = render("@**King Hamlet** @**King Hamlet|6** @_**King Hamlet** @**Twin**");
    expect(r.html).toBe(
      '<p><span class="user-mention" data-user-id="5">@King Hamlet</span> <span class="user-mention" data-user-id="6">@King Hamlet</span> <span class="user-mention silent" data-user-id="5">King Hamlet</span> @<strong>Twin</strong></p>',
    );
    expect([...r.mentionedUserIds].sort()).toEqual([5, 6]);
  });

  test("wildcards and groups", () => {
    for (const w of ["all", "everyone", "channel", "stream"]) expect(render(`@**${w}**`).channelWildcard).toBe(true);
    const t = render("@**topic**");
    expect(t.topicWildcard).toBe(true);
    expect(t.html).toBe('<p><span class="topic-mention">@topic</span></p>');
    expect(render("@_**all**").channelWildcard).toBe(false);
    const g = render("@*support*");
    expect(g.html).toBe('<p><span class="user-group-mention" data-user-group-id="3">@support</span></p>');
    expect([...g.mentionedGroupIds]).toEqual([3]);
    expect(render("email@**King Hamlet**").mentionedUserIds.size).toBe(0);
  });

  test("channel and topic links", () => {
    expect(render("#**Denmark**").html).toBe('<p><a class="stream" data-stream-id="9" href="/#narrow/channel/9-Denmark">#Denmark</a></p>');
    expect(render("#**Denmark>bug 1.2**").html).toBe(
      '<p><a class="stream-topic" data-stream-id="9" href="/#narrow/channel/9-Denmark/topic/bug.201.2E2">#Denmark &gt; bug 1.2</a></p>',
    );
    expect(render("#**Nowhere**").html).toBe("<p>#<strong>Nowhere</strong></p>");
    // The first ">" ends the channel name; a topic may hold more of them.
    expect(render("#**Denmark>a > b**").html).toBe(
      '<p><a class="stream-topic" data-stream-id="9" href="/#narrow/channel/9-Denmark/topic/a.20.3E.20b">#Denmark &gt; a &gt; b</a></p>',
    );
  });

  test("message links: #**channel>topic@id**", () => {
    expect(render("#**Denmark>castle@42**").html).toBe(
      '<p><a class="message-link" href="/#narrow/channel/9-Denmark/topic/castle/near/42">#Denmark &gt; castle @ 💬</a></p>',
    );
    // Not a message ID: part of the topic.
    expect(render("#**Denmark>mail@home**").html).toContain('class="stream-topic"');
    // No channel "A", but one named "A>B": a channel link, as in Zulip.
    expect(render("#**A>B**").html).toBe('<p><a class="stream" data-stream-id="12" href="/#narrow/channel/12-A.3EB">#A&gt;B</a></p>');
  });

  test("emoji", () => {
    expect(render(":smile: :+1: :not_an_emoji:").html).toBe(
      '<p><span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span> <span aria-label="+1" class="emoji emoji-1f44d" role="img" title="+1">:+1:</span> :not_an_emoji:</p>',
    );
  });

  test("emoji typed as characters, and emoticons when the sender asked for them", () => {
    const smile = '<span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span>';
    // An emoji outside Zulip's names goes by its CLDR name; a skin tone (which has no
    // name, as in Zulip) and digits stay as typed.
    expect(render("🙂 in **🙂** 1 👍🏽 🇩🇪").html).toBe(
      `<p>${smile} in <strong>${smile}</strong> 1 👍🏽 <span aria-label="flag germany" class="emoji emoji-1f1e9-1f1ea" role="img" title="flag germany">:flag_germany:</span></p>`,
    );
    expect(render(":flag_germany: :weary_face:").html).toContain('class="emoji emoji-1f629"');
    expect(render(":) :(").html).toBe("<p>:) :(</p>");
    const translating = (s: string) => renderMarkdown(s, { ...ctx, translateEmoticons: true }).html;
    expect(translating(":):) x\n:)")).toBe(`<p>:)${smile} x<br>\n${smile}</p>`);
    expect(translating("[:)](http://example.com) *:)* `:)`")).toBe(`<p><a href="http://example.com">${smile}</a> <em>${smile}</em> <code>:)</code></p>`);
    expect(translating(":/ :| :o")).toBe(
      '<p><span aria-label="confused" class="emoji emoji-1f615" role="img" title="confused">:confused:</span> ' +
        '<span aria-label="neutral" class="emoji emoji-1f610" role="img" title="neutral">:neutral:</span> ' +
        '<span aria-label="open mouth" class="emoji emoji-1f62e" role="img" title="open mouth">:open_mouth:</span></p>',
    );
  });

  test("fences as Zulip reads them: the language in lower case, `quoted`, only `math` as math, the realm's default language outside spoilers", () => {
    expect(render("```Quote\nhi\n```").html).toBe("<blockquote>\n<p>hi</p>\n</blockquote>");
    expect(render("```quoted\nhi\n```").html).toBe("<blockquote>\n<p>hi</p>\n</blockquote>");
    expect(render("```MATH\nx^2\n```").html).toContain('<span class="katex-display">');
    // TeX source shown as code, as Pygments' TeX lexer names it; an unknown name in lower case.
    expect(render("```latex\n\\frac12\n```").html).toBe('<div class="codehilite" data-code-language="TeX"><pre><span></span><code><span class="k">\\frac</span>12\n</code></pre></div>');
    expect(render("```FooBar\nx\n```").html).toContain('data-code-language="foobar"');
    const withDefault = (s: string) => renderMarkdown(s, { ...ctx, defaultCodeBlockLanguage: "python" }).html;
    expect(withDefault("```\nx\n```")).toBe('<div class="codehilite" data-code-language="Python"><pre><span></span><code>x\n</code></pre></div>');
    expect(withDefault("```js\nx\n```")).toContain('data-code-language="JavaScript"');
    expect(withDefault("````quote\n```\nx\n```\n````")).toBe(
      '<blockquote>\n<div class="codehilite" data-code-language="Python"><pre><span></span><code>x\n</code></pre></div>\n</blockquote>',
    );
    const spoiler = withDefault("````spoiler Open\n```\nx\n```\n````");
    expect(spoiler).toContain("<pre><span></span><code>x\n</code>");
    expect(spoiler).not.toContain("data-code-language");
    // After a spoiler, the default again.
    expect(withDefault("```spoiler a\nb\n```\n\n```\nx\n```")).toContain('data-code-language="Python"');
  });

  test("fenced code, quotes, spoilers", () => {
    // The language as Pygments names it, as Zulip writes it (code playgrounds match on it).
    expect(render("```python\nprint('<b>')\n```").html).toBe(
      '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="nb">print</span>(<span class="s1">&#39;&lt;b&gt;&#39;</span>)\n</code></pre></div>',
    );
    expect(render("~~~~.py2\nx\n~~~~").html).toContain('data-code-language="Python 2.x"');
    expect(render("```JS\nx\n```").html).toContain('data-code-language="JavaScript"');
    expect(render("```nosuchlanguage\nx\n```").html).toContain('data-code-language="nosuchlanguage"');
    expect(render("> quoted").html).toBe("<blockquote>\n<p>quoted</p>\n</blockquote>");
    expect(render("```quote\ninner **b**\n```").html).toBe("<blockquote>\n<p>inner <strong>b</strong></p>\n</blockquote>");
    expect(render("```spoiler Plot\nhe dies\n```").html).toBe(
      '<div class="spoiler-block"><div class="spoiler-header"><p>Plot</p></div><div class="spoiler-content" aria-hidden="true"><p>he dies</p></div></div>',
    );
  });

  test("links, linkifiers and has: properties", () => {
    const r = render("see https://example.com/a.png and fix #123 [docs](https://zulip.com/api/)");
    expect(r.html).toContain('<a href="https://example.com/a.png">https://example.com/a.png</a>');
    expect(r.html).toContain('<a href="https://github.com/zulip/zulip/issues/123">#123</a>');
    expect(r.html).toContain('<a href="https://zulip.com/api/">docs</a>');
    expect(linkProperties(r.linkUrls)).toEqual({ has_link: true, has_image: true, has_attachment: false });
    expect(linkProperties(render("[f](/user_uploads/2/ab/file.pdf)").linkUrls).has_attachment).toBe(true);
    expect(render("[pic](/user_uploads/2/ab/cat.jpg)").html).toBe(
      '<p><a href="/user_uploads/2/ab/cat.jpg">pic</a></p>\n<div class="message_inline_image"><a href="/user_uploads/2/ab/cat.jpg" title="pic"><img src="/user_uploads/2/ab/cat.jpg"></a></div>',
    );
  });

  test("sanitized: raw HTML escaped, dangerous URLs refused, no image syntax", () => {
    const r = render('<img src=x onerror=alert(1)> <script>alert(1)</script> [a](javascript:alert(1)) [b](data:text/html,x) ![i](https://x/y.png)');
    expect(r.html).not.toMatch(/<img[^>]*onerror|<script/);
    // The only image is the preview of the linked image, in Zulip's markup.
    expect(r.html.match(/<img /g)).toHaveLength(1);
    expect(r.html).toContain('<div class="message_inline_image"><a href="https://x/y.png" title="i"><img src="https://x/y.png"></a></div>');
    expect(r.html).not.toContain('href="javascript');
    expect(r.html).not.toContain('href="data:');
    expect(r.html).toContain("&lt;script&gt;");
    expect(render('@**King Hamlet|5"><script>**').html).not.toContain("<script>");
  });

  test("as Zulip: no underscore emphasis, <del> strikethrough, aligned cells in Zulip's style form", () => {
    expect(render("_foo_ __init__.py snake_case_name *yes*").html).toBe("<p>_foo_ __init__.py snake_case_name <em>yes</em></p>");
    expect(render("~~gone~~").html).toBe("<p><del>gone</del></p>");
    const table = render("| a | b | c |\n|:--|--:|:-:|\n| 1 | 2 | 3 |").html;
    expect(table).toContain('<th style="text-align: left;">a</th>');
    expect(table).toContain('<td style="text-align: right;">2</td>');
    expect(table).toContain('<td style="text-align: center;">3</td>');
  });

  test("global times: ISO 8601 only (FL 503) as a <time> element in UTC, the input as its text; anything else stays escaped text (FL 451)", () => {
    expect(render("<time:2024-06-05T22:30:00+02:00>").html).toBe('<p><time datetime="2024-06-05T20:30:00Z">2024-06-05T22:30:00+02:00</time></p>');
    expect(render("<time:2024-06-05 22:30>").html).toBe('<p><time datetime="2024-06-05T22:30:00Z">2024-06-05 22:30</time></p>');
    expect(render("<time:2024-06-05>").html).toBe('<p><time datetime="2024-06-05T00:00:00Z">2024-06-05</time></p>');
    expect(render("<time:20240605T223000Z>").html).toBe('<p><time datetime="2024-06-05T22:30:00Z">20240605T223000Z</time></p>');
    expect(render("<time:2024-06-05T22:30-0530>").html).toBe('<p><time datetime="2024-06-06T04:00:00Z">2024-06-05T22:30-0530</time></p>');
    expect(render("<time:2017-06-05T22:30:00.25Z>").html).toBe('<p><time datetime="2017-06-05T22:30:00.250000Z">2017-06-05T22:30:00.25Z</time></p>');
    // No longer times: a Unix timestamp, free text, an impossible date.
    expect(render("at <time:1496701800>").html).toBe("<p>at &lt;time:1496701800&gt;</p>");
    expect(render("<time:June 5 2017>").html).toBe("<p>&lt;time:June 5 2017&gt;</p>");
    expect(render("<time:2024-06-31>").html).toBe("<p>&lt;time:2024-06-31&gt;</p>");
    expect(render("<time:banana & <b>>").html).toBe("<p>&lt;time:banana &amp; &lt;b&gt;&gt;</p>");
    expect(render("<time:>").html).toBe("<p>&lt;time:&gt;</p>");
  });

  test("emoji by Zulip's names, and :zulip:", () => {
    expect(render(":smile: :cat: :rabbit:").html).toBe(
      '<p><span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span> ' +
        '<span aria-label="cat" class="emoji emoji-1f408" role="img" title="cat">:cat:</span> ' +
        '<span aria-label="rabbit" class="emoji emoji-1f407" role="img" title="rabbit">:rabbit:</span></p>',
    );
    expect(render(":zulip:").html).toBe('<p><img alt=":zulip:" class="emoji" src="/static/generated/emoji/images/emoji/unicode/zulip.png" title="zulip"></p>');
  });

  test("topic links name the message the server picks (its newest readable, FL 400) with `with` (FL 347); the empty topic shows its display name (FL 346)", () => {
    const withIds: RenderContext = { ...ctx, topicLinkMessageId: (_channel, topic) => (topic === "castle" ? 14 : topic === "" ? 21 : undefined), emptyTopicDisplayName: "chat" };
    expect(renderMarkdown("#**Denmark>castle**", withIds).html).toBe(
      '<p><a class="stream-topic" data-stream-id="9" href="/#narrow/channel/9-Denmark/topic/castle/with/14">#Denmark &gt; castle</a></p>',
    );
    expect(renderMarkdown("#**Denmark>empty topic**", withIds).html).toBe(
      '<p><a class="stream-topic" data-stream-id="9" href="/#narrow/channel/9-Denmark/topic/empty.20topic">#Denmark &gt; empty topic</a></p>',
    );
    expect(renderMarkdown("#**Denmark>**", withIds).html).toBe(
      '<p><a class="stream-topic" data-stream-id="9" href="/#narrow/channel/9-Denmark/topic//with/21">#Denmark &gt; <em>chat</em></a></p>',
    );
    expect(renderMarkdown("#**Denmark>@21**", withIds).html).toBe(
      '<p><a class="message-link" href="/#narrow/channel/9-Denmark/topic//near/21">#Denmark &gt; <em>chat</em> @ 💬</a></p>',
    );
  });

  test("image previews where Zulip puts them: after their paragraph, in their list item, none in a quote; a lone bare image URL is only its preview", () => {
    const preview = (url: string, title?: string) =>
      `<div class="message_inline_image"><a href="${url}"${title ? ` title="${title}"` : ""}><img src="${url}"></a></div>`;
    expect(render("https://x.example/a.png").html).toBe(preview("https://x.example/a.png"));
    expect(render("look https://x.example/a.png\n\nafter").html).toBe(
      `<p>look <a href="https://x.example/a.png">https://x.example/a.png</a></p>\n${preview("https://x.example/a.png")}\n<p>after</p>`,
    );
    expect(render("* one https://x.example/a.png\n* two").html).toBe(
      `<ul>\n<li>one <a href="https://x.example/a.png">https://x.example/a.png</a>${preview("https://x.example/a.png")}\n</li>\n<li>two</li>\n</ul>`,
    );
    expect(render("> quoted https://x.example/a.png").html).not.toContain("message_inline_image");
    // Each image once, titled by its first link's text.
    expect(render("[a](https://x.example/a.png) and [again](https://x.example/a.png)").html.match(/message_inline_image/g)).toHaveLength(1);
  });

  test("mentions of deactivated users and groups render silent and notify nobody; name|id must name that user", () => {
    const withInactive: RenderContext = {
      ...ctx,
      userById: (id) => (id === 7 ? { id: 7, full_name: "Old Yorick", is_active: false } : ctx.userById(id)),
      usersByName: (name) => (name === "Old Yorick" ? [{ id: 7, full_name: "Old Yorick", is_active: false }] : ctx.usersByName(name)),
      groupByName: (name) => (name === "retired" ? { id: 4, name: "retired", deactivated: true } : ctx.groupByName(name)),
    };
    const r = renderMarkdown("@**Old Yorick** @**Old Yorick|7** @*retired* @**Someone Else|5**", withInactive);
    expect(r.html).toBe(
      '<p><span class="user-mention silent" data-user-id="7">Old Yorick</span> <span class="user-mention silent" data-user-id="7">Old Yorick</span> ' +
        '<span class="user-group-mention silent" data-user-group-id="4">retired</span> @<strong>Someone Else|5</strong></p>',
    );
    expect(r.mentionedUserIds.size).toBe(0);
    expect(r.mentionedGroupIds.size).toBe(0);
  });

  test("math as Zulip renders it with KaTeX: inline $$…$$, ```math blocks as display math, tex-error for what KaTeX refuses", () => {
    const inline = render("so $$x^2$$ here").html;
    expect(inline).toStartWith('<p>so <span class="katex"><span class="katex-mathml"><math xmlns="http://www.w3.org/1998/Math/MathML">');
    expect(inline).toContain('<annotation encoding="application/x-tex">x^2</annotation>');
    expect(inline).toEndWith(" here</p>");
    // Not touching a word, not starting with _ or $, one line (Zulip's TEX_RE).
    expect(render("a$$x$$b").html).toBe("<p>a$$x$$b</p>");
    expect(render("$$_x$$").html).not.toContain("katex");
    expect(render("$$\\frac{1}{$$").html).toBe('<p><span class="tex-error">$$\\frac{1}{$$</span></p>');
    const block = render("```math\n\\int_0^1 x\\,dx\n\n\\sum_i i\n```").html;
    expect(block.match(/<p><span class="katex-display">/g)).toHaveLength(2);
    expect(render("```math\n\\frac{\n```").html).toBe('<p><span class="tex-error">\\frac{</span></p>');
    // KaTeX's trust stays off: no link from \\href.
    expect(render("$$\\href{javascript:alert(1)}{x}$$").html).not.toContain("href=");
  });

  test("code blocks highlighted as Pygments writes them: one span per token with Pygments' class", () => {
    const block = (lang: string, code: string) => render(`\`\`\`${lang}\n${code}\n\`\`\``).html;
    expect(block("py", 'def f(x):\n    return "s" + 0x1f # no <b>\n@cached\nclass A: pass')).toBe(
      '<div class="codehilite" data-code-language="Python"><pre><span></span><code>' +
        '<span class="k">def</span> <span class="nf">f</span>(x):\n' +
        '    <span class="k">return</span> <span class="s2">&quot;s&quot;</span> + <span class="mh">0x1f</span> <span class="c1"># no &lt;b&gt;</span>\n' +
        '<span class="nd">@cached</span>\n<span class="k">class</span> <span class="nc">A</span>: <span class="k">pass</span>\n</code></pre></div>',
    );
    expect(block("c", "#include <stdio.h>\nint x = 1.5; /* c */")).toContain(
      '<span class="cp">#include </span><span class="cpf">&lt;stdio.h&gt;</span>\n<span class="kt">int</span> x = <span class="mf">1.5</span>; <span class="cm">/* c */</span>',
    );
    expect(block("json", '{"a": [true, null]}')).toContain('<span class="nt">&quot;a&quot;</span><span class="p">:</span> <span class="p">[</span><span class="kc">true</span>');
    // A script in HTML in JavaScript's classes, whatever was highlighted before.
    expect(block("html", "<p>x</p><script>var y;</script>")).toContain('<span class="nt">&lt;p&gt;</span>x<span class="nt">&lt;/p&gt;&lt;script&gt;</span><span class="k">var</span> y;');
    expect(block("diff", "@@ -1 +1 @@\n-a\n+b")).toContain('<span class="gu">@@ -1 +1 @@</span>\n<span class="gd">-a</span>\n<span class="gi">+b</span>');
    // Plain text: no language, one not highlighted (a grammar too slow on hostile input, or unknown), a run of 80 characters without a space.
    const plain = (html: string) => expect(html).not.toContain("<span class=");
    plain(render("```\ndef f(): pass\n```").html);
    plain(block("csharp", "class A { }"));
    plain(block("text", "def f(): pass"));
    plain(block("py", `def f(): return "${"x".repeat(78)}"`));
    expect(block("py", `def f(): return "${"x".repeat(77)}"`)).toContain('<span class="k">def</span>');
    // A message has 10,000 characters of code highlighted; later blocks are plain.
    const big = `def f(): pass\n${"y = 1\n".repeat(1600)}`;
    const twice = render(`\`\`\`py\n${big}\`\`\`\n\n\`\`\`py\n${big}\`\`\``).html;
    expect(twice.match(/<span class="k">def<\/span>/g)).toHaveLength(1);
  });

  test("TeX with characters KaTeX has no metrics for renders without writing to the log", () => {
    const warn = spyOn(console, "warn");
    try {
      expect(render("$$🙂🙂🙂$$").html).toContain('<span class="katex">');
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  test("a message renders at most 1 MB of TeX, spoilers included", () => {
    const one = render("$$x$$").html.length;
    // Each half stays under the cap; together they pass it.
    const half = Array.from({ length: Math.ceil(1_000_000 / one / 2) + 50 }, () => "$$x$$").join(" ");
    expect(render(half).html).not.toContain("tex-error");
    expect(render(`\`\`\`spoiler a\n${half}\n\`\`\`\n\n${half}`).html).toContain('<span class="tex-error">$$x$$</span>');
  });

  test("hostile inputs found in review: inherited names as languages, macro bombs, times past Python's range", () => {
    for (const fence of ["```constructor\nx\n```", "~~~.__proto__\nx\n~~~", "```toString\nx\n```"]) {
      expect(render(fence).html).toMatch(/^<div class="codehilite" data-code-language="(constructor|__proto__|tostring)">/);
    }
    // Nested \\defs rendered megabytes in seconds: macro definitions are TeX errors here.
    const bomb = "$$\\def\\a{" + "x".repeat(400) + "}\\def\\b{\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a}\\b\\b\\b$$";
    expect(render(bomb).html).toStartWith('<p><span class="tex-error">');
    expect(render("```math\n\\newcommand{\\x}{y}\\x\n```").html).toContain("tex-error");
    // Digits past the microsecond are dropped, as Python's fromisoformat drops them.
    expect(render("<time:1970-01-01T00:00:01.9999999Z>").html).toBe('<p><time datetime="1970-01-01T00:00:01.999999Z">1970-01-01T00:00:01.9999999Z</time></p>');
    expect(render("<time:99999999999999>").html).toBe("<p>&lt;time:99999999999999&gt;</p>");
    expect(render("<time:0000-01-01>").html).toBe("<p>&lt;time:0000-01-01&gt;</p>");
    expect(render("<time:9999-12-31T23:59:59-01:00>").html).toBe("<p>&lt;time:9999-12-31T23:59:59-01:00&gt;</p>");
    // A preview's title is the link's text, not the markup of an emoji in it.
    expect(render("[:smile: pic](https://x.example/a.png)").html).toContain('title=" pic"');
  });

  test("bare domains are linked with http://, as Zulip links them; file names with a country-code extension stay text", () => {
    expect(render("see www.zulip.com/foo and example.org").html).toBe(
      '<p>see <a href="http://www.zulip.com/foo">www.zulip.com/foo</a> and <a href="http://example.org">example.org</a></p>',
    );
    expect(render("run setup.py, read notes.md and run.sh").html).toBe("<p>run setup.py, read notes.md and run.sh</p>");
  });

  test("links into this server's web app become relative, as Zulip writes them", () => {
    const own: RenderContext = { ...ctx, ownUrl: "https://chat.example.com" };
    expect(renderMarkdown("https://chat.example.com/#narrow/channel/9-Denmark and [x](https://chat.example.com/#feed) and https://other.example.com/#narrow/x", own).html).toBe(
      '<p><a href="#narrow/channel/9-Denmark">https://chat.example.com/#narrow/channel/9-Denmark</a> and <a href="#feed">x</a> and ' +
        '<a href="https://other.example.com/#narrow/x">https://other.example.com/#narrow/x</a></p>',
    );
  });

  test("content_html_diff: added and removed runs of words, tags kept from the new rendering", () => {
    expect(htmlDiff("<p>a b c</p>", "<p>a b c d e</p>")).toBe('<div><p>a b c <span class="highlight_text_inserted">d e</span></p></div>');
    expect(htmlDiff("<p>a b c d</p>", "<p>a b</p>")).toBe('<div><p>a b <span class="highlight_text_deleted">c d</span></p></div>');
    expect(htmlDiff("<p>hello</p>", "<p><strong>hello</strong> world</p>")).toBe('<div><p><strong>hello</strong> <span class="highlight_text_inserted">world</span></p></div>');
    // Too large to compare word by word: everything new is marked added and everything old removed.
    const many = (w: string) => `<p>${Array.from({ length: 2100 }, (_, i) => `${w}${i}`).join(" ")}</p>`;
    const big = htmlDiff(many("x"), many("y"));
    expect(big.startsWith('<div><p><span class="highlight_text_inserted">y0 ')).toBe(true);
    expect(big).toContain('<span class="highlight_text_deleted">x0 ');
  });
});
