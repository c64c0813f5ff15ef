// The signed-in person: who they are, what they see, signing out here or everywhere.
import { html, type Raw } from "@pss/html";
import type { Viewer } from "../auth/sessions.ts";
import { BASE, csrfField } from "./layout.ts";

export function accountBody(viewer: Viewer, notice?: string): Raw {
  return html`<h1>Your account</h1>
${notice ? html`<p class="notice good">${notice}</p>` : ""}
<dl><dt>Signed in as</dt><dd>${viewer.email}</dd><dt>Partner</dt><dd>${viewer.partnerName}</dd>
<dt>Lead figures</dt><dd>${viewer.leadAccess ? "Shown (you have lead access)" : "Not shown: your partner has not given you lead access"}</dd></dl>
<h2>Signing out</h2>
<p>A session ends after 8 hours without use, and 7 days after signing in at the latest.</p>
<form method="post" action="${BASE}/sign-out">${csrfField(viewer)}<button type="submit">Sign out of this browser</button></form>
<form method="post" action="${BASE}/sign-out-everywhere" style="margin-top:.8rem">${csrfField(viewer)}<button type="submit" class="secondary">Sign out everywhere</button></form>
<p class="muted">Signing out everywhere ends your sessions on every browser and device at once.</p>`;
}
