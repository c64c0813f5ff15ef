import { describe, expect, test } from "bun:test";
import { bodyFieldType } from "../validation/record-validator.ts";
import { cellValue, csvRecords, parseCsv } from "./csv.ts";

describe("CSV", () => {
  test("quoted cells keep commas, doubled quotes and line breaks; CRLF and a byte-order mark are accepted", () => {
    const { rows, lines } = parseCsv(
      '\uFEFFkind,id,title\r\nlisting,L-1,"Tacos, ""best"" in town"\r\nlisting,L-2,"two\nlines"\r\n\r\n',
    );
    expect(rows).toEqual([
      ["kind", "id", "title"],
      ["listing", "L-1", 'Tacos, "best" in town'],
      ["listing", "L-2", "two\nlines"],
    ]);
    expect(lines).toEqual([1, 2, 3]);
  });

  test("an unclosed quote is an error naming its line", () => {
    expect(() => parseCsv('kind,id\nlisting,"L-1\n')).toThrow("line 2: a quoted cell is never closed");
  });

  test("cells take their field's type: numbers, booleans, JSON arrays; empty means not sent and null clears", () => {
    const csv = [
      "kind,id,brokerExternalId,status,location.city,location.country,financials.askingPrice,financing.financingAvailable,photos,title",
      'listing,L-1,B-1,FOR_SALE,Austin,US,450000,true,"[{""url"":""https://i.example.com/1.jpg"",""sortKey"":1}]",450000',
      "listing,L-2,B-1,SOLD,,,,,,null",
    ].join("\n");
    const { records, problems } = csvRecords(csv, bodyFieldType);
    expect(problems).toEqual([]);
    expect(records[0]!.body).toEqual({
      brokerExternalId: "B-1",
      status: "FOR_SALE",
      location: { city: "Austin", country: "US" },
      financials: { askingPrice: 450000 },
      financing: { financingAvailable: true },
      photos: [{ url: "https://i.example.com/1.jpg", sortKey: 1 }],
      title: "450000",
    });
    expect(records[1]).toEqual({
      line: 3,
      kind: "listing",
      id: "L-2",
      body: { brokerExternalId: "B-1", status: "SOLD", title: null },
    });
  });

  test("a value of the wrong type is kept as written, so validation names the field", () => {
    expect(cellValue("cheap", "number", "financials.askingPrice")).toBe("cheap");
    expect(cellValue("yes", "boolean", "financing.financingAvailable")).toBe("yes");
    expect(() => cellValue("[oops", "array", "photos")).toThrow("photos: the cell is not valid JSON");
  });

  test("a bad row is a problem on its line; the header must name kind and id", () => {
    const { records, problems } = csvRecords(
      "kind,id,photos\nlisting,L-1,[oops\nlisting,L-2\nlisting,L-3,[]",
      bodyFieldType,
    );
    expect(records.map((r) => r.id)).toEqual(["L-3"]);
    expect(problems).toEqual([
      {
        line: 2,
        kind: "listing",
        id: "L-1",
        error: "photos: the cell is not valid JSON (arrays and objects are written as JSON in one cell)",
      },
      { line: 3, kind: "listing", id: "L-2", error: "line 3: 2 cells where the header has 3" },
    ]);
    expect(() => csvRecords("id,title\nL-1,x", bodyFieldType)).toThrow("must name the columns kind and id");
  });
});
