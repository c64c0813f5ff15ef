import { describe, expect, test } from "bun:test";
import { formatPercent, formatTime, keyLabel, maskEmail } from "./format.ts";

describe("portal formatting", () => {
  test("an e-mail address is shown masked: the first letter and the domain", () => {
    expect(maskEmail("leads@crm.example.com")).toBe("l***@crm.example.com");
    expect(maskEmail(null)).toBe("—");
    expect(maskEmail("nonsense")).toBe("***");
  });
  test("times are shown in UTC, to the second", () => {
    expect(formatTime("2026-11-22T20:30:15.123Z")).toBe("2026-11-22 20:30:15 UTC");
    expect(formatTime(null)).toBe("—");
  });
  test("percentages keep one decimal except at the ends", () => {
    expect(formatPercent(0, 10)).toBe("0%");
    expect(formatPercent(1, 3)).toBe("33.3%");
    expect(formatPercent(3, 3)).toBe("100%");
    expect(formatPercent(0, 0)).toBe("0%");
  });
  test("a key is named by its prefix and ID, never more", () => {
    expect(keyLabel("pss_live_Ab12", "7")).toBe("pss_live_Ab12… (key 7)");
    expect(keyLabel(null, null)).toBe("—");
  });
});
