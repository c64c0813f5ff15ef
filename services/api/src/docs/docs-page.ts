// A readable, dependency-free HTML rendering of the OpenAPI document (no scripts, no CDN).
import type { UntypedJson } from "@pss/contracts";

const escape = (s: unknown) => String(s ?? "").replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function schemaTable(schema: UntypedJson | undefined, depth = 0): string {
  if (!schema || typeof schema !== "object") return "";
  const variants = schema.anyOf?.filter((v: UntypedJson) => v.type !== "null");
  if (variants?.length === 1) return schemaTable(variants[0], depth);
  if (schema.type === "array") return schemaTable(schema.items, depth);
  if (schema.type !== "object" || !schema.properties) return "";
  const required = new Set<string>(schema.required ?? []);
  const rows = Object.entries<UntypedJson>(schema.properties).map(([name, prop]) => {
    const type = describeType(prop);
    const nested = depth < 3 ? schemaTable(prop, depth + 1) : "";
    return `<tr><td><code>${escape(name)}</code>${required.has(name) ? " <em>required</em>" : ""}</td><td>${escape(type)}</td><td>${escape(prop.description ?? "")}${nested}</td></tr>`;
  });
  return `<table><thead><tr><th>field</th><th>type</th><th>notes</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function describeType(prop: UntypedJson): string {
  if (prop.anyOf) {
    const consts = prop.anyOf.filter((v: UntypedJson) => v.const !== undefined).map((v: UntypedJson) => v.const);
    if (consts.length) return `one of ${consts.join(", ")}`;
    return prop.anyOf.map(describeType).join(" | ");
  }
  if (prop.const !== undefined) return JSON.stringify(prop.const);
  if (typeof prop.$ref === "string") return prop.$ref.slice(prop.$ref.lastIndexOf("/") + 1);
  return [prop.type ?? "any", prop.format ? `(${prop.format})` : ""].join(" ").trim();
}

/** The examples of a media type (request body or answer), each as its summary and pretty-printed JSON. */
function examplesOf(media: UntypedJson | undefined, heading: string): string {
  const examples = Object.values<UntypedJson>(media?.examples ?? {});
  return examples
    .map(
      (e) =>
        `<p class="ex">${escape(heading)}: ${escape(e.summary ?? "")}</p><pre>${escape(JSON.stringify(e.value, null, 2))}</pre>`,
    )
    .join("");
}

export function renderDocsPage(doc: UntypedJson): string {
  const ops = Object.entries<UntypedJson>(doc.paths).flatMap(([path, methods]) =>
    Object.entries<UntypedJson>(methods).map(([method, op]) => {
      const bodyMedia = op.requestBody?.content?.["application/json"];
      const body = bodyMedia?.schema;
      const responses = Object.entries<UntypedJson>(op.responses)
        .map(([status, r]) => {
          const media = r.content?.["application/json"];
          return `<li><strong>${escape(status)}</strong> ${escape(r.description)}${schemaTable(media?.schema)}${examplesOf(media, `Example ${status}`)}</li>`;
        })
        .join("");
      const curl = op["x-codeSamples"]?.[0]?.source;
      return `<section><h2><span class="m">${escape(method.toUpperCase())}</span> <code>${escape(path)}</code></h2>
<p>${escape(op.summary)}</p>${op.description ? `<p>${escape(op.description)}</p>` : ""}
<p>${op.security?.length === 0 ? "No authentication." : "Requires <code>Authorization: Bearer &lt;API_KEY&gt;</code>."}</p>
${curl ? `<h3>Example request</h3><pre>${escape(curl)}</pre>` : ""}${body ? `<h3>Request body</h3>${schemaTable(body)}${examplesOf(bodyMedia, "Example body")}` : ""}<h3>Responses</h3><ul>${responses}</ul></section>`;
    }),
  );
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(doc.info.title)}: API reference</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}code{background:#f3f3f3;padding:0 .2em}
table{border-collapse:collapse;margin:.5rem 0;width:100%}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
section{border-top:2px solid #ddd;margin-top:2rem}pre{background:#f6f6f6;padding:.5rem;overflow-x:auto;font-size:14px}.ex{margin:.5rem 0 0;font-style:italic}.m{background:#0b5;color:#fff;padding:0 .4em;border-radius:3px}</style></head>
<body><main><h1>${escape(doc.info.title)}</h1><p>${escape(doc.info.description)}</p>
<p>Machine-readable: <a href="/partner/v1/openapi.json">/partner/v1/openapi.json</a> (OpenAPI ${escape(doc.openapi)}).</p>
${ops.join("\n")}</main></body></html>`;
}
