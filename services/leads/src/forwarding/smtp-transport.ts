// The SMTP transport is service-kit's (the portal sends mail too); named here for the leads service's own code.
export { createSmtpCheck, createSmtpTransport, type SmtpConfig } from "@pss/service-kit/smtp";
