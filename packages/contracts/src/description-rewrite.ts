// The deterministic description rewrite buyers see (spec: "may be optimized by automated rewriting; the original is
// preserved"). Pure text in, text out: the indexer stores it, the API falls back to it while the indexer has not
// caught up, and any LLM output passes through it so contact details can never slip past.
//
// It only tidies: whitespace and punctuation, shouted sentences to sentence case, and removal of e-mail
// addresses, phone numbers and web addresses that would let buyers bypass the marketplace. Every other word
// stays the partner's.

// A label right before a contact detail goes with it: "call us at 512 555 0100" leaves nothing behind.
const LABEL = String.raw`(?:\b(?:call|text|phone|tel|telephone|cell|mobile|fax|e-?mail|write(?: to)?|message|whatsapp|contact|website|web|visit|see|reach)\b(?:\s+(?:me|us|him|her|the owner|the seller|the broker))?(?:\s+(?:at|on|via))?\s*:?\s*)?`;
const withLabel = (pattern: string) => new RegExp(LABEL + pattern, "gi");
const EMAIL = withLabel(String.raw`[A-Z0-9._%+-]+@[A-Z0-9-]+(?:\.[A-Z0-9-]+)*\.[A-Z]{2,}`);
// "jane [at] example [dot] com", "jane(at)example.com"
const OBFUSCATED_EMAIL = withLabel(
  String.raw`[A-Z0-9._%+-]+\s*[[({]\s*at\s*[\])}]\s*[A-Z0-9-]+(?:\s*(?:[[({]\s*dot\s*[\])}]|\.)\s*[A-Z0-9-]+)+`,
);
const URL = withLabel(String.raw`\b(?:https?:\/\/|www\.)[^\s<>"]*[^\s<>".,;:!?)]`);
const BARE_DOMAIN = withLabel(
  String.raw`\b[A-Z0-9](?:[A-Z0-9-]*[A-Z0-9])?(?:\.[A-Z0-9](?:[A-Z0-9-]*[A-Z0-9])?)*\.(?:com|net|org|biz|info|io|co|us|ca|uk|de|fr|au|me|app|site|online|store|shop)\b(?:\/[^\s<>"]*[^\s<>".,;:!?)])?`,
);
// Candidates only; looksLikePhone() decides. Money ($1,200,000), years and plain amounts are not phone-shaped.
const PHONE = withLabel(String.raw`((?<![\w$€£.,\/-])\+?\(?\d[\d\s().-]{5,22}\d(?![\w.,]?\d))`);
// Kept upper case when a shouted sentence is lowered: common business abbreviations.
const ACRONYMS = new Set([
  "LLC",
  "INC",
  "LTD",
  "SBA",
  "HVAC",
  "USA",
  "UK",
  "EU",
  "FF&E",
  "SDE",
  "EBITDA",
  "POS",
  "ATM",
  "CEO",
  "CFO",
  "DBA",
  "NNN",
  "ROI",
  "LLP",
  "NYC",
  "ADA",
  "ATV",
  "RV",
  "BBQ",
  "TV",
  "DVD",
  "CPA",
  "HR",
  "B2B",
  "B2C",
  "I",
]);
// Where a contact detail was, while the rewrite tidies around it.
const GAP = "\u0001";

function looksLikePhone(candidate: string): boolean {
  const digits = candidate.replace(/\D/g, "");
  if (candidate.trim().startsWith("+")) return digits.length >= 8 && digits.length <= 15;
  const groups = candidate.split(/[\s().-]+/).filter(Boolean);
  if (groups.length === 1) return digits.length >= 10 && digits.length <= 11;
  // Separated numbers: every group phone-sized, e.g. (512) 555-0100, 512.555.0100, 1 512 555 0100, 555-0100.
  if (groups.some((g) => g.length > 4)) return false;
  if (digits.length === 7) return /^\d{3}[-.]\d{4}$/.test(candidate.trim());
  return digits.length >= 10 && digits.length <= 13;
}

// What each pattern cannot match without: a text lacking it skips that pattern. The optional label in front makes
// every pattern try a match at each word, the bulk of the rewrite's cost (kept when the cheap test finds a hint).
const HINTS = {
  url: /https?:\/\/|www\./i,
  email: /@/,
  obfuscatedEmail: /[[({]\s*at\s*[\])}]/i,
  bareDomain: /\.(?:com|net|org|biz|info|io|co|us|ca|uk|de|fr|au|me|app|site|online|store|shop)\b/i,
  phone: /\d[\d\s().-]{5,22}\d/,
};

/** Replaces e-mail addresses, web addresses and phone numbers (with their labels) by `gap`. */
export function removeContactDetails(text: string, gap = " "): string {
  let out = text;
  if (HINTS.url.test(out)) out = out.replace(URL, gap);
  if (HINTS.email.test(out)) out = out.replace(EMAIL, gap);
  if (HINTS.obfuscatedEmail.test(out)) out = out.replace(OBFUSCATED_EMAIL, gap);
  if (HINTS.bareDomain.test(out)) out = out.replace(BARE_DOMAIN, gap);
  if (HINTS.phone.test(out)) out = out.replace(PHONE, (m, candidate: string) => (looksLikePhone(candidate) ? gap : m));
  return out;
}

/** Closes the gaps removal left: "X or Y" runs, dangling "at"/"or", a sentence now starting in lower case. */
function closeGaps(line: string): string {
  if (!line.includes(GAP)) return line;
  let text = line
    .replace(/\u0001(?:\s*(?:[,;/&]|\bor\b|\band\b)?\s*\u0001)+/gi, GAP)
    .replace(/\b(?:or|and|at|on|via)\s+\u0001/gi, GAP);
  // A sentence that was nothing but contact details disappears with its punctuation (repeated: matches overlap).
  for (let before = ""; before !== text; ) {
    before = text;
    text = text.replace(/([.!?])\s*\u0001\s*[.!?]+/g, "$1");
  }
  return text
    .replace(/^\s*\u0001\s*[.!?]+\s*/, "")
    .replace(/\u0001\s*\b(?:or|and)\b(?=\s*(?:[.,;:!?]|$))/gi, GAP)
    .replace(
      /([.!?]["')\]]?\s*)\u0001\s*(?:[,;:.]\s*)?(\p{Ll})/gu,
      (_m, end: string, c: string) => end + c.toUpperCase(),
    )
    .replace(/^\s*\u0001\s*(?:[,;:.]\s*)?(\p{Ll})/u, (_m, c: string) => c.toUpperCase())
    .replace(/\u0001/g, " ");
}

function isShouting(sentence: string): boolean {
  // Ordinary text answers at once: lower-case ASCII letters over a fifth of the sentence already rule it out
  // (they are letters that are not upper case, and there are no more letters than characters).
  let lower = 0;
  for (let i = 0; i < sentence.length; i++) {
    const c = sentence.charCodeAt(i);
    if (c >= 97 && c <= 122) lower++;
  }
  if (lower * 5 > sentence.length) return false;
  const letters = sentence.replace(/[^\p{L}]/gu, "");
  if (letters.length < 6) return false;
  const upper = letters.replace(/[^\p{Lu}]/gu, "").length;
  const words = sentence.split(/\s+/).filter((w) => /\p{L}{2,}/u.test(w));
  return upper / letters.length > 0.8 && words.length >= 2;
}

function sentenceCase(sentence: string): string {
  const lowered = sentence.replace(/[\p{L}&0-9]+/gu, (word) => {
    const bare = word.toUpperCase();
    if (ACRONYMS.has(bare) || ACRONYMS.has(word) || /\d/.test(word)) return word;
    return word.toLowerCase();
  });
  return lowered.replace(/\p{L}/u, (c) => c.toUpperCase());
}

function fixShouting(paragraph: string): string {
  // Sentences end at . ! ? followed by a space; the separators are kept as they are.
  return paragraph
    .split(/(?<=[.!?])(\s+)/)
    .map((part) => (isShouting(part) ? sentenceCase(part) : part))
    .join("");
}

function tidyPunctuation(paragraph: string): string {
  return paragraph
    .replace(/[ \t]+/g, " ")
    .replace(/\(\s*[,;:/-]?\s*\)/g, "")
    .replace(/\s+([,.;:!?)])/g, "$1")
    .replace(/\(\s+/g, "(")
    .replace(/([!?])[!?.]+/g, "$1")
    .replace(/\.([!?])/g, "$1")
    .replace(/([.!?])\s*[,;:]+/g, "$1")
    .replace(/\.{4,}/g, "...")
    .replace(/,{2,}/g, ",")
    .replace(/([,;:])(?:\s*[,;:])+/g, "$1")
    .replace(/(?<!\.)\.(?:\s*\.)(?!\.)/g, ".")
    .replace(/[,;:]\s*([.!?])/g, "$1")
    .replace(/([,;])(?=\p{L})/gu, "$1 ")
    .replace(/([.!?])(?=\p{Lu}\p{Ll})/gu, "$1 ")
    .replace(/^[\s,.;:!?]+(?=\S)/, "")
    .replace(/^[\s,.;:!?-]+$/, "")
    .replace(/[ ]{2,}/g, " ")
    .trim();
}

/** The optimized description: same words, minus contact details, without shouting, tidy whitespace. */
export function rewriteDescription(text: string): string {
  const normalized = text
    .replace(/\r\n?/g, "\n")
    .replace(/[\u00a0\u2000-\u200a\u202f\u205f\u3000]/g, " ")
    .replace(/[\u200b-\u200d\u2060\ufeff]/g, "");
  // Paragraphs (blank lines) and single line breaks (lists) are kept; everything else is tidied per line.
  return removeContactDetails(normalized, GAP)
    .split(/\n\s*\n/)
    .map((p) =>
      p
        .split("\n")
        .map((line) => tidyPunctuation(fixShouting(tidyPunctuation(closeGaps(line)))))
        .filter(Boolean)
        .join("\n"),
    )
    .filter((p) => p.length > 0)
    .join("\n\n");
}
