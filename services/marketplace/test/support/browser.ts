// A real headless browser for the page tests: Debian's Chromium driven by playwright-core. CI runs as root on a
// fresh machine, so a missing Chromium is installed with apt (the same helper the infrastructure runner uses).
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";
import { aptInstall } from "../../../../infra/src/system-packages.ts";

export const CHROMIUM = "/usr/bin/chromium";

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export async function ensureChromium(): Promise<string> {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `the browser tests need Chromium at ${CHROMIUM}: install it with 'sudo apt-get install -y chromium' (not root, so the tests cannot install it)`,
    );
  }
  // Another process may hold the dpkg lock (a colleague's test run installing the same package): retry a little.
  for (let attempt = 1; ; attempt++) {
    try {
      await aptInstall(["chromium"]);
    } catch (err) {
      if (existsSync(CHROMIUM)) break;
      if (attempt >= 3) throw new Error(`could not install Chromium with apt: ${(err as Error).message}`);
      await Bun.sleep(10_000);
      continue;
    }
    break;
  }
  if (!existsSync(CHROMIUM)) throw new Error(`apt installed chromium but ${CHROMIUM} does not exist`);
  return CHROMIUM;
}

/**
 * Chromium writes its crash database (~/.config/chromium/Crash Reports) and GTK's dconf cache into the user's home
 * whatever the profile directory: each launch gets its own config and cache homes, removed on close.
 */
function browserHome(): { env: Record<string, string | undefined>; remove(): void } {
  const home = mkdtempSync(join(tmpdir(), "pss-chromium-home-"));
  return {
    env: { ...process.env, XDG_CONFIG_HOME: join(home, "config"), XDG_CACHE_HOME: join(home, "cache") },
    remove: () => rmSync(home, { recursive: true, force: true }),
  };
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A fresh profile directory per launch, removed on close. */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = await ensureChromium();
  const userDataDir = mkdtempSync(join(tmpdir(), "pss-chromium-"));
  const home = browserHome();
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    env: home.env,
    headless: true,
    args: ARGS,
    offline: false,
    javaScriptEnabled: true,
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(userDataDir, { recursive: true, force: true });
      home.remove();
    },
  };
}

/** Chromium with separate contexts (e.g. one without JavaScript), closed together. */
export interface ChromiumSession {
  newContext(opts?: {
    javaScriptEnabled?: boolean;
    viewport?: { width: number; height: number };
  }): Promise<BrowserContext>;
  close(): Promise<void>;
}

/**
 * `hosts`: names the browser resolves to a loopback address (e.g. the public host of the pages under test, so
 * redirects and form posts take the real network path); every other name fails to resolve.
 */
export async function launchChromium(opts: { hosts?: Record<string, string> } = {}): Promise<ChromiumSession> {
  const executablePath = await ensureChromium();
  const rules = [...Object.entries(opts.hosts ?? {}).map(([name, ip]) => `MAP ${name} ${ip}`), "MAP * ~NOTFOUND"].join(
    ", ",
  );
  const home = browserHome();
  const browser = await chromium.launch({
    executablePath,
    env: home.env,
    headless: true,
    args: [...ARGS, `--host-resolver-rules=${rules}`],
  });
  return {
    newContext: (opts = {}) =>
      browser.newContext({
        javaScriptEnabled: opts.javaScriptEnabled ?? true,
        viewport: opts.viewport ?? { width: 1280, height: 900 },
      }),
    close: async () => {
      await browser.close().catch(() => {});
      home.remove();
    },
  };
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

let axeSource: string | null = null;

/**
 * axe-core (pinned in package.json) run on the page as it is: WCAG 2.1 A/AA rules and best practices. It is
 * evaluated through the DevTools protocol, which the page's CSP (no scripts) does not govern.
 */
export async function axeViolations(page: import("playwright-core").Page): Promise<AxeViolation[]> {
  axeSource ??= await Bun.file(require.resolve("axe-core/axe.min.js")).text();
  if (!(await page.evaluate("typeof window.axe === 'object'"))) await page.evaluate(`${axeSource}\n;true`);
  const result = (await page.evaluate(
    `axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] }, resultTypes: ["violations"] })`,
  )) as {
    violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
  };
  return result.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    targets: v.nodes.map((n) => n.target.join(" ")),
  }));
}
