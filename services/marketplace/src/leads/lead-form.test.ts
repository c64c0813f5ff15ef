import { describe, expect, test } from "bun:test";
import { leadBodyFromForm, leadFormProblems } from "./lead-form.ts";

const form = (fields: Record<string, string>) => leadBodyFromForm(new URLSearchParams(fields));

describe("leadBodyFromForm", () => {
  test("empty optional fields are left out and line breaks become \\n, as a JSON client sends them", () => {
    const { body, values } = form({
      name: "Ann",
      email: " ann@example.com ",
      phone: "",
      message: "Line one\r\nLine two",
      website: "",
      extra: "ignored",
    });
    expect(body).toEqual({ name: "Ann", email: "ann@example.com", message: "Line one\nLine two" });
    expect(values).toEqual({ name: "Ann", email: "ann@example.com", phone: "", message: "Line one\nLine two" });
  });

  test("a filled honeypot is passed on, so the intake treats it as the JSON route does", () => {
    expect(
      form({ name: "Bot", email: "b@example.com", message: "x", website: "https://spam.example" }).body.website,
    ).toBe("https://spam.example");
  });
});

describe("leadFormProblems", () => {
  test("a valid inquiry has none", () => {
    expect(
      leadFormProblems(form({ name: "Ann", email: "ann@example.com", phone: "+1 512 555 0100", message: "Hi" }).body),
    ).toEqual({});
  });

  test("every field's problem at once, in buyers' words, from the JSON route's schema and rules", () => {
    expect(leadFormProblems(form({ name: "   ", email: "ann@", phone: "call me", message: "" }).body)).toEqual({
      name: "Enter your name.",
      email: "Enter an e-mail address like name@example.com.",
      phone: "Enter a phone number in digits, e.g. +1 512 555 0100, or leave it empty.",
      message: "Write a message for the broker.",
    });
  });

  test("lengths count characters as the API does, and control characters are refused", () => {
    expect(leadFormProblems(form({ name: "😀".repeat(200), email: "a@example.com", message: "m" }).body)).toEqual({});
    expect(
      leadFormProblems(form({ name: "n".repeat(201), email: "a@example.com", message: "x".repeat(5001) }).body),
    ).toEqual({
      name: "Use at most 200 characters.",
      message: "Use at most 5,000 characters.",
    });
    expect(leadFormProblems(form({ name: "Ann\u0007", email: "a@example.com", message: "m" }).body).name).toStartWith(
      "Must not contain control characters",
    );
  });
});
