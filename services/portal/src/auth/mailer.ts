// The portal's e-mails: the sign-in link and the invitation. Plain text and a simple HTML part, both made from
// strings only. Without an SMTP relay (development only: production refuses to boot without one) the message is
// written to the log instead, so a local stack can still be signed in to.
import { escapeHtml } from "@pss/html";
import type { Logger } from "@pss/service-kit";
import type { SmtpConfig, SmtpTransport } from "@pss/service-kit/smtp";

export interface PortalMail {
  to: string;
  subject: string;
  /** Paragraphs; a line that is a URL becomes a link in the HTML part. */
  paragraphs: string[];
  /** Message-ID's local part (the domain is SMTP_FROM's). */
  id: string;
}

export interface PortalMailer {
  send(mail: PortalMail): Promise<void>;
}

export function createPortalMailer(deps: {
  transport: Pick<SmtpTransport, "sendMail"> | null;
  smtp: SmtpConfig | null;
  logger: Logger;
}): PortalMailer {
  return {
    async send(mail) {
      const text = `${mail.paragraphs.join("\n\n")}\n`;
      if (!deps.transport || !deps.smtp) {
        // Development without a relay: the person running the stack reads the link here.
        deps.logger.warn("no SMTP relay (SMTP_HOST unset): the portal e-mail is written here instead of sent", {
          to: mail.to,
          subject: mail.subject,
          text,
        });
        return;
      }
      const html = mail.paragraphs
        .map((p) =>
          /^https?:\/\/\S+$/.test(p)
            ? `<p><a href="${escapeHtml(p)}">${escapeHtml(p)}</a></p>`
            : `<p>${escapeHtml(p).replace(/\n/g, "<br>")}</p>`,
        )
        .join("\n");
      await deps.transport.sendMail({
        from: deps.smtp.from,
        to: mail.to,
        subject: mail.subject,
        text,
        html: `<!doctype html><html lang="en"><body>${html}</body></html>`,
        messageId: `<${mail.id}@${deps.smtp.fromDomain}>`,
      });
    },
  };
}
