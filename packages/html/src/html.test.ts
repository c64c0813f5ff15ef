import { describe, expect, test } from "bun:test";
import { html, jsonForScript, raw } from "./html.ts";

describe("html", () => {
  test("escapes every interpolated value; nested templates and raw() stay markup", () => {
    const title = `<img src=x onerror="alert(1)"> & 'Co'`;
    expect(html`<h1>${title}</h1>${html`<b>${"<i>"}</b>`}${raw("<br>")}${null}${false}${[1, "<"]}`).toEqual(
      raw(`<h1>&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; &#39;Co&#39;</h1><b>&lt;i&gt;</b><br>1&lt;`),
    );
  });
});

describe("jsonForScript", () => {
  test("nothing in it can end the script element or open a comment, and it parses back to the same value", () => {
    const value = { name: `</script><script>alert(1)</script><!-- & \u2028\u2029` };
    const text = jsonForScript(value);
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(text)).toEqual(value);
  });
});
