import { describe, expect, test } from "bun:test";
import { classifySmtpError, describeSmtpError, isDatabaseOutage } from "./smtp-errors.ts";

describe("classifySmtpError", () => {
  test("a 5xx for the recipient or the message is permanent", () => {
    expect(classifySmtpError({ code: "EENVELOPE", responseCode: 550, command: "RCPT TO" })).toBe("permanent");
    expect(classifySmtpError({ code: "EMESSAGE", responseCode: 554, command: "DATA" })).toBe("permanent");
  });

  test("a 4xx is transient", () => {
    expect(classifySmtpError({ code: "EENVELOPE", responseCode: 451, command: "RCPT TO" })).toBe("transient");
    expect(classifySmtpError({ code: "EMESSAGE", responseCode: 452 })).toBe("transient");
  });

  test("connection problems, authentication and a refused sender are our side: unavailable, never the lead's fault", () => {
    for (const code of ["ECONNECTION", "ETIMEDOUT", "ESOCKET", "EDNS", "ETLS"])
      expect(classifySmtpError({ code })).toBe("unavailable");
    expect(classifySmtpError({ code: "EAUTH", responseCode: 535 })).toBe("unavailable");
    expect(classifySmtpError({ code: "EENVELOPE", responseCode: 553, command: "MAIL FROM" })).toBe("unavailable");
    expect(classifySmtpError(new Error("boom"))).toBe("unavailable");
  });
});

describe("describeSmtpError", () => {
  test("keeps the server reply on one line, or the code when there is none", () => {
    expect(describeSmtpError({ response: "451 4.7.1  Try\r\n again later" })).toBe("451 4.7.1 Try again later");
    expect(describeSmtpError({ code: "ECONNECTION", message: "connect ECONNREFUSED 127.0.0.1:1" })).toBe(
      "ECONNECTION: connect ECONNREFUSED 127.0.0.1:1",
    );
  });
});

test("isDatabaseOutage: PostgreSQL unreachable or going away is ours (wait); a failing statement is not", () => {
  for (const code of ["ECONNREFUSED", "CONNECTION_CLOSED", "CONNECT_TIMEOUT", "57P01", "57P03", "53300"])
    expect(isDatabaseOutage(Object.assign(new Error("pg"), { code }))).toBe(true);
  for (const code of ["23505", "42P01", "22P02"])
    expect(isDatabaseOutage(Object.assign(new Error("pg"), { code }))).toBe(false);
  expect(isDatabaseOutage(new TypeError("x is undefined"))).toBe(false);
});
