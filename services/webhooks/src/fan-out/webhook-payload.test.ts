import { expect, test } from "bun:test";
import { withPublicUrls } from "./webhook-payload.ts";

test("live records' URLs are their public pages; test records' are their previews", () => {
  const data = { serviceListingId: 42, serviceBrokerId: "7", version: 3 };
  expect(withPublicUrls(data, "https://market.example.com")).toEqual({
    ...data,
    serviceListingUrl: "https://market.example.com/listings/42",
    serviceProfileUrl: "https://market.example.com/brokers/7",
  });
  expect(withPublicUrls(data, "https://market.example.com", "test")).toEqual({
    ...data,
    serviceListingUrl: "https://market.example.com/preview/listings/42",
    serviceProfileUrl: "https://market.example.com/preview/brokers/7",
  });
  expect(withPublicUrls({ endpointId: "crm", version: 1 }, "https://market.example.com")).toEqual({
    endpointId: "crm",
    version: 1,
  });
});
