import { afterAll, expect, test } from "bun:test";
import { Client } from "@opensearch-project/opensearch";
import { testUrls, uniqueName } from "../support/env.ts";

const client = new Client({ node: testUrls().OPENSEARCH_URL });
const index = uniqueName("plumbing-index");
afterAll(async () => {
  await client.indices.delete({ index }).catch(() => {});
  await client.close();
});

test("OpenSearch: an indexed document is found by a full-text query with an English analyzer", async () => {
  await client.indices.create({
    index,
    body: { mappings: { properties: { title: { type: "text", analyzer: "english" }, state: { type: "keyword" } } } },
  });
  await client.index({ index, id: "1", body: { title: "Profitable bakeries for sale", state: "TX" }, refresh: true });
  await client.index({ index, id: "2", body: { title: "Car wash", state: "CA" }, refresh: true });
  const res = await client.search({
    index,
    body: { query: { bool: { must: { match: { title: "bakery" } }, filter: { term: { state: "TX" } } } } },
  });
  const hits = res.body.hits.hits;
  expect(hits.map((h) => h._id)).toEqual(["1"]);
});
